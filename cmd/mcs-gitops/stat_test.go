// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The stat counts content lines by the hunks' lengths, so a removed line
// that reads like a file header is content; new and removed files are
// named by their path, not /dev/null.
func TestDiffStat(t *testing.T) {
	patch := strings.Join([]string{
		"--- a/status/SUMMARY.md",
		"+++ b/status/SUMMARY.md",
		"@@ -1,3 +1,3 @@",
		" # Multi-cluster services",
		"--- a/looks-like-a-header",
		"+| row |",
		" end",
		"--- /dev/null",
		"+++ b/clusters/c1/new.yaml",
		"@@ -0,0 +1,2 @@",
		"+a: 1",
		"+b: 2",
		"--- a/clusters/c1/old.yaml",
		"+++ /dev/null",
		"@@ -1 +0,0 @@",
		"-gone: true",
		"",
	}, "\n")
	got := diffStat(patch)
	assert.Equal(t, []fileStat{
		{path: "status/SUMMARY.md", added: 1, erased: 1},
		{path: "clusters/c1/new.yaml", added: 2},
		{path: "clusters/c1/old.yaml", erased: 1},
	}, got)
	var b strings.Builder
	writeStat(&b, got)
	assert.Equal(t, " status/SUMMARY.md    |    2 +-\n clusters/c1/new.yaml |    2 ++\n clusters/c1/old.yaml |    1 -\n 3 file(s) changed, 3 insertion(s)(+), 2 deletion(s)(-)\n", b.String())
}
