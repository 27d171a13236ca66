// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"maps"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// A push onto the remote's commit sends only what the new commit adds,
// and that is enough: after commits that change, add (in new and nested
// directories), and remove files, git fsck finds the remote whole, and a
// fresh clone of it holds every commit's files. A remote branch somewhere
// else is left to go-git's push, which refuses it.
func TestPushOntoSendsWhatTheCommitAdds(t *testing.T) {
	ctx := context.Background()
	bare := bareRemote(t)
	r := open(t, bare)
	files := rendered()
	_, _, err := r.Commit(files, treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	head, err := r.Head()
	require.NoError(t, err)
	handled, err := r.pushOnto(ctx, head)
	require.NoError(t, err)
	require.False(t, handled, "a first push is go-git's")
	require.NoError(t, r.Push(ctx))

	steps := []func(map[string][]byte){
		func(f map[string][]byte) { f["status/web/api.yaml"] = []byte("changed: 1\n") },
		func(f map[string][]byte) {
			f["clusters/b/kustomization.yaml"] = []byte("resources: [shop/cart/serviceimport.yaml]\n")
			f["clusters/b/shop/cart/serviceimport.yaml"] = []byte("kind: ServiceImport\n")
		},
		func(f map[string][]byte) { delete(f, "clusters/a/web/api/serviceimport.yaml") },
		func(f map[string][]byte) {
			f["clusters/b/shop/cart/serviceimport.yaml"] = []byte("kind: ServiceImport\n# again\n")
		},
	}
	for i, step := range steps {
		files = maps.Clone(files)
		step(files)
		_, changed, err := r.Commit(files, treeRoots, StaticMessage("step"))
		require.NoError(t, err)
		require.True(t, changed, "step %d", i)
		head, err := r.Head()
		require.NoError(t, err)
		handled, err := r.pushOnto(ctx, head)
		require.NoError(t, err, "step %d", i)
		require.True(t, handled, "step %d: the remote is at the parent", i)

		fresh := open(t, bare)
		got, err := fresh.Head()
		require.NoError(t, err)
		require.Equal(t, head, got, "step %d", i)
		held, err := fresh.Files(got)
		require.NoError(t, err)
		require.Equal(t, files, held, "step %d", i)
	}
	if gitBin, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(gitBin, "-C", bare, "fsck", "--full", "--strict").CombinedOutput()
		require.NoError(t, err, string(out))
	}

	// Another writer moves the remote on; this clone's next commit is not
	// onto it.
	other := open(t, bare)
	theirs := maps.Clone(files)
	theirs["status/web/theirs.yaml"] = []byte("theirs: 1\n")
	_, _, err = other.Commit(theirs, treeRoots, StaticMessage("theirs"))
	require.NoError(t, err)
	require.NoError(t, other.Push(ctx))
	files = maps.Clone(files)
	files["status/web/mine.yaml"] = []byte("mine: 1\n")
	_, _, err = r.Commit(files, treeRoots, StaticMessage("mine"))
	require.NoError(t, err)
	head, err = r.Head()
	require.NoError(t, err)
	handled, err = r.pushOnto(ctx, head)
	require.NoError(t, err)
	require.False(t, handled)
	require.ErrorIs(t, r.Push(ctx), ErrPushRejected)
}
