// SPDX-License-Identifier: Apache-2.0

// Package mermaid checks Mermaid diagrams with Mermaid's own parser, run
// under Node (`make testbin` installs the mermaid and jsdom packages into
// TESTBIN/mermaid): what GitHub, GitLab and Gitea will draw is what the
// tests parse. It must not be imported by production code.
package mermaid

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/nodejs"
)

//go:embed check.mjs
var checkScript []byte

// Parse parses each diagram and returns, per diagram, "" or the parser's
// error. Where Node or the packages are missing the test is skipped with
// the reason, and fails under CI=true.
func Parse(t testing.TB, diagrams []string) []string {
	t.Helper()
	dir, err := prepare(t)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mermaid: %v", err)
		}
		t.Skipf("skipping: mermaid: %v", err)
	}
	in, err := json.Marshal(diagrams)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "check.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mermaid: node: %v: %s", err, stderr.String())
	}
	var errs []string
	if err := json.Unmarshal(out, &errs); err != nil || len(errs) != len(diagrams) {
		t.Fatalf("mermaid: answer %q: %v", out, err)
	}
	return errs
}

func prepare(t testing.TB) (string, error) {
	return nodejs.Script(t, "mermaid", []string{"mermaid", "jsdom"}, "check.mjs", checkScript)
}
