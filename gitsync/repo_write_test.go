// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Once a Commit has written the worktree, the next one writes only what it
// changes against HEAD: a file it does not change is not even read, so an
// edit there (which no commit holds) stays, and the message is written from
// the same change that is committed.
func TestCommitWritesOnlyWhatChanged(t *testing.T) {
	r := open(t, bareRemote(t))
	_, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	untouched := filepath.Join(r.Dir(), "status", "web", "api.yaml")
	require.NoError(t, os.WriteFile(untouched, []byte("edited by hand\n"), 0o644))

	files := rendered()
	files["clusters/a/kustomization.yaml"] = []byte("resources: []\n")
	delete(files, "clusters/a/web/api/serviceimport.yaml")
	files["clusters/b/kustomization.yaml"] = []byte("resources: []\n")
	var seen *Changes
	calls := 0
	_, changed, err := r.Commit(files, treeRoots, func(c *Changes) string { calls++; seen = c; return "second" })
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, 1, calls, "the message is written once")
	assert.Equal(t, []string{"clusters/a/kustomization.yaml", "clusters/b/kustomization.yaml"}, seen.Written)
	assert.Equal(t, []string{"clusters/a/web/api/serviceimport.yaml"}, seen.Removed)

	got := snapshotDir(t, r.Dir())
	assert.Equal(t, "edited by hand\n", got["status/web/api.yaml"], "an unchanged file is not rewritten")
	assert.Equal(t, "resources: []\n", got["clusters/a/kustomization.yaml"])
	assert.Equal(t, "resources: []\n", got["clusters/b/kustomization.yaml"])
	assert.NotContains(t, got, "clusters/a/web/api/serviceimport.yaml")
	assert.NotContains(t, got, "clusters/a/web", "directories left empty are removed")

	_, changed, err = r.Commit(files, treeRoots, func(*Changes) string { t.Fatal("no change, no message"); return "" })
	require.NoError(t, err)
	assert.False(t, changed)
}

// A link put into the worktree where a changed file or its directory goes
// is deleted, never written through, even when only the change is written;
// a removed file below a linked directory is not deleted through the link.
func TestCommitWritingOnlyTheChangeFollowsNoLink(t *testing.T) {
	r := open(t, bareRemote(t))
	files := rendered()
	files["clusters/c/web/api/serviceimport.yaml"] = []byte("kind: ServiceImport\n")
	_, _, err := r.Commit(files, treeRoots, StaticMessage("first"))
	require.NoError(t, err)

	outside := t.TempDir()
	victim := filepath.Join(outside, "serviceimport.yaml")
	require.NoError(t, os.WriteFile(victim, []byte("not ours\n"), 0o644))
	target := filepath.Join(outside, "target")
	require.NoError(t, os.WriteFile(target, []byte("not ours\n"), 0o644))
	// A linked directory on the way to a written file, a link at a
	// written file, and a linked directory above a removed file.
	require.NoError(t, os.RemoveAll(filepath.Join(r.Dir(), "clusters", "a", "web")))
	require.NoError(t, os.Symlink(outside, filepath.Join(r.Dir(), "clusters", "a", "web")))
	require.NoError(t, os.Remove(filepath.Join(r.Dir(), "clusters", "a", "kustomization.yaml")))
	require.NoError(t, os.Symlink(target, filepath.Join(r.Dir(), "clusters", "a", "kustomization.yaml")))
	require.NoError(t, os.RemoveAll(filepath.Join(r.Dir(), "clusters", "c", "web", "api")))
	require.NoError(t, os.Symlink(outside, filepath.Join(r.Dir(), "clusters", "c", "web", "api")))

	next := rendered()
	next["clusters/a/kustomization.yaml"] = []byte("resources: [web/api/serviceimport.yaml, web/api/service.yaml]\n")
	next["clusters/a/web/api/service.yaml"] = []byte("kind: Service\n")
	_, changed, err := r.Commit(next, treeRoots, StaticMessage("second"))
	require.NoError(t, err)
	require.True(t, changed)

	for _, f := range []string{victim, target} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Equal(t, "not ours\n", string(b), "%s was written or deleted through a link", f)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "nothing written into the linked directory")
	got := snapshotDir(t, r.Dir())
	assert.Equal(t, "kind: Service\n", got["clusters/a/web/api/service.yaml"])
	assert.Equal(t, "dir", got["clusters/a/web"], "the link on the way is replaced by a directory")
	assert.Equal(t, string(next["clusters/a/kustomization.yaml"]), got["clusters/a/kustomization.yaml"])
}
