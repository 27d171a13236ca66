// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	r := open(t, bareRemote(t))
	first, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("first\n"))
	require.NoError(t, err)
	require.True(t, changed)
	files := rendered()
	files["status/SUMMARY.md"] = []byte("second\n")
	second, _, err := r.Commit(files, treeRoots, StaticMessage("second\n"))
	require.NoError(t, err)

	for rev, want := range map[string]string{
		"HEAD": second.String(), "HEAD~1": first.String(), "main": second.String(), first.String()[:10]: first.String(),
	} {
		got, err := r.Resolve(rev)
		require.NoError(t, err, rev)
		assert.Equal(t, want, got.String(), rev)
	}
	_, err = r.Resolve("no-such-branch")
	assert.ErrorContains(t, err, `"no-such-branch"`)
}
