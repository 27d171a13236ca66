// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Commit keeps the index it wrote in memory for the next commit
// (indexCache), and must still see what anything else wrote to the index
// since: here a person staging a file outside the roots between two
// commits. Starting from the index as the loop last wrote it would drop
// their entry; git status then shows the file untracked again.
func TestStageReadsAnIndexSomeoneElseWrote(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	r := open(t, bareRemote(t))
	files := rendered()
	_, changed, err := r.Commit(files, treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, r.SyncIndex())
	require.NotNil(t, r.indexCache.idx, "the index just written is kept")

	require.NoError(t, os.WriteFile(filepath.Join(r.root, "README.md"), []byte("hi\n"), 0o644))
	out, err := exec.Command(gitBin, "-C", r.root, "add", "README.md").CombinedOutput()
	require.NoError(t, err, string(out))

	files["status/web/api.yaml"] = []byte("namespace: web\nname: api\ntype: Headless\n")
	_, changed, err = r.Commit(files, treeRoots, StaticMessage("second"))
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, r.SyncIndex())
	out, err = exec.Command(gitBin, "-C", r.root, "status", "--porcelain").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "A  README.md\n", string(out), "the person's staged file is still staged, and nothing else differs")

	// With nobody else writing, the next commit starts from the kept index
	// and leaves the same clean state.
	files["status/web/api.yaml"] = []byte("namespace: web\nname: api\n")
	_, changed, err = r.Commit(files, treeRoots, StaticMessage("third"))
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, r.SyncIndex())
	out, err = exec.Command(gitBin, "-C", r.root, "status", "--porcelain").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "A  README.md\n", string(out))
}

// Commits in a row leave the index behind until SyncIndex, which stages
// what all of them changed (a path changed then removed is removed) and
// keeps a person's staged file; with nothing left behind it writes
// nothing.
func TestSyncIndexStagesEveryCommitSinceTheLast(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	status := func() string {
		out, err := exec.Command(gitBin, "-C", ".", "status", "--porcelain").CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	r := open(t, bareRemote(t))
	t.Chdir(r.root)
	files := rendered()
	_, _, err = r.Commit(files, treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	require.NoError(t, r.SyncIndex())
	require.Equal(t, "", status())

	require.NoError(t, os.WriteFile(filepath.Join(r.root, "README.md"), []byte("hi\n"), 0o644))
	out, err := exec.Command(gitBin, "-C", r.root, "add", "README.md").CombinedOutput()
	require.NoError(t, err, string(out))
	files["status/web/api.yaml"] = []byte("changed: 1\n")
	files["status/web/new.yaml"] = []byte("new: 1\n")
	_, _, err = r.Commit(files, treeRoots, StaticMessage("second"))
	require.NoError(t, err)
	delete(files, "status/web/new.yaml")
	files["status/web/api.yaml"] = []byte("changed: 2\n")
	_, _, err = r.Commit(files, treeRoots, StaticMessage("third"))
	require.NoError(t, err)
	require.NotEqual(t, "A  README.md\n", status(), "the index is behind the last commits")

	require.NoError(t, r.SyncIndex())
	require.Equal(t, "A  README.md\n", status())
	fi, err := r.indexFile()
	require.NoError(t, err)
	require.NoError(t, r.SyncIndex())
	again, err := r.indexFile()
	require.NoError(t, err)
	require.Equal(t, fi.ModTime(), again.ModTime(), "nothing left behind: the index is not written")
}
