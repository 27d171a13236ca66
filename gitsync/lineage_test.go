// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forcePush points the bare remote's main at commit, as a force-push does.
func forcePush(t *testing.T, bare string, commit plumbing.Hash) {
	t.Helper()
	r, err := git.PlainOpen(bare)
	require.NoError(t, err)
	require.NoError(t, r.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", commit)))
}

// A remote recreated empty under a running loop: the stale remote-tracking
// branch made Push believe the remote held HEAD, so it pushed nothing and
// the remote stayed empty until the next change. The branch is pushed
// again.
func TestRemoteRecreatedEmptyIsPushedAgain(t *testing.T) {
	bare := bareRemote(t)
	r := open(t, bare)
	ctx := context.Background()
	head, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	require.NoError(t, r.Push(ctx))

	require.NoError(t, os.RemoveAll(bare))
	_, err = git.PlainInit(bare, true)
	require.NoError(t, err)

	require.NoError(t, r.ResetToRemote(ctx))
	got, err := r.Head()
	require.NoError(t, err)
	assert.Equal(t, head, got, "the clone keeps its commit")
	require.NoError(t, r.Push(ctx))
	_, remote := remoteTree(t, bare)
	assert.Equal(t, head, remote.Hash, "the remote has the branch again")
}

// A remote branch rewritten behind the loop (force-pushed to an older
// commit, or to an unrelated one) is refused, and the clone is left as it
// was; a branch that moved forward is followed.
func TestRewrittenBranchIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		rewrite func(t *testing.T, bare string, first, second plumbing.Hash)
	}{
		{"force-pushed to an older commit", func(t *testing.T, bare string, first, _ plumbing.Hash) { forcePush(t, bare, first) }},
		{"force-pushed to an empty orphan", func(t *testing.T, bare string, _, _ plumbing.Hash) {
			r, err := git.PlainOpen(bare)
			require.NoError(t, err)
			tree := &object.Tree{}
			obj := r.Storer.NewEncodedObject()
			require.NoError(t, tree.Encode(obj))
			th, err := r.Storer.SetEncodedObject(obj)
			require.NoError(t, err)
			sig := object.Signature{Name: "someone", Email: "s@example.com", When: clock()}
			c := &object.Commit{Author: sig, Committer: sig, Message: "empty\n", TreeHash: th}
			obj = r.Storer.NewEncodedObject()
			require.NoError(t, c.Encode(obj))
			ch, err := r.Storer.SetEncodedObject(obj)
			require.NoError(t, err)
			forcePush(t, bare, ch)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare := bareRemote(t)
			r := open(t, bare)
			first, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first"))
			require.NoError(t, err)
			require.NoError(t, r.Push(ctx))
			files := rendered()
			files["status/web/api.yaml"] = []byte("second\n")
			second, _, err := r.Commit(files, treeRoots, StaticMessage("second"))
			require.NoError(t, err)
			require.NoError(t, r.Push(ctx))

			tc.rewrite(t, bare, first, second)
			err = r.ResetToRemote(ctx)
			var rw *RewrittenError
			require.True(t, errors.As(err, &rw), "want a RewrittenError, got %v", err)
			assert.Equal(t, second, rw.Was)
			assert.Contains(t, err.Error(), "was rewritten")
			head, err := r.Head()
			require.NoError(t, err)
			assert.Equal(t, second, head, "the clone is left as it was")
		})
	}

	t.Run("moved forward", func(t *testing.T) {
		bare := bareRemote(t)
		r := open(t, bare)
		_, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first"))
		require.NoError(t, err)
		require.NoError(t, r.Push(ctx))
		other := open(t, bare, func(o *Options) { o.Author = Signature{Name: "A Person", Email: "p@example.com"} })
		files := rendered()
		delete(files, "status/web/api.yaml")
		theirs, _, err := other.Commit(files, treeRoots, StaticMessage("a person deletes a file"))
		require.NoError(t, err)
		require.NoError(t, other.Push(ctx))

		before, err := r.Head()
		require.NoError(t, err)
		require.NoError(t, r.ResetToRemote(ctx))
		head, err := r.Head()
		require.NoError(t, err)
		assert.Equal(t, theirs, head)
		foreign, err := r.Foreign(before, head, []string{"status"})
		require.NoError(t, err)
		require.Len(t, foreign, 1)
		assert.Equal(t, "A Person", foreign[0].Author)
		assert.Equal(t, "a person deletes a file", foreign[0].Subject)
		assert.Equal(t, []string{"status/web/api.yaml"}, foreign[0].Paths)
		mine, err := r.Foreign(plumbing.ZeroHash, before, []string{"status"})
		require.NoError(t, err)
		assert.Empty(t, mine, "the loop's own commits are not foreign")
	})
}

// The line recorded outside the process (RequireDescent) holds a fresh
// clone, which remembers nothing, to the same rule: the CronJob and a
// restarted controller refuse a branch force-pushed behind them, and a
// fresh clone of a remote recreated empty cannot push the history back,
// so it is refused too, where a kept clone pushes it again.
func TestRequiredDescentHoldsAFreshClone(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (bare string, first, second plumbing.Hash) {
		bare = bareRemote(t)
		r := open(t, bare)
		first, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first"))
		require.NoError(t, err)
		require.NoError(t, r.Push(ctx))
		files := rendered()
		files["status/web/api.yaml"] = []byte("second\n")
		second, _, err = r.Commit(files, treeRoots, StaticMessage("second"))
		require.NoError(t, err)
		require.NoError(t, r.Push(ctx))
		return bare, first, second
	}

	t.Run("force-pushed to an older commit", func(t *testing.T) {
		bare, first, second := setup(t)
		forcePush(t, bare, first)
		fresh := open(t, bare)
		fresh.RequireDescent(second)
		var rw *RewrittenError
		require.ErrorAs(t, fresh.ResetToRemote(ctx), &rw)
		assert.Equal(t, first, rw.Now)
		assert.Equal(t, second, rw.Was)
	})

	t.Run("force-pushed to an unrelated commit the clone never saw", func(t *testing.T) {
		bare, _, _ := setup(t)
		fresh := open(t, bare)
		// A commit this clone does not hold: nothing on the branch below it.
		fresh.RequireDescent(plumbing.NewHash("0123456789abcdef0123456789abcdef01234567"))
		var rw *RewrittenError
		require.ErrorAs(t, fresh.ResetToRemote(ctx), &rw)
	})

	t.Run("moved forward", func(t *testing.T) {
		bare, first, second := setup(t)
		fresh := open(t, bare)
		fresh.RequireDescent(first)
		require.NoError(t, fresh.ResetToRemote(ctx))
		head, err := fresh.Head()
		require.NoError(t, err)
		assert.Equal(t, second, head)
	})

	recreate := func(t *testing.T, bare string) {
		require.NoError(t, os.RemoveAll(bare))
		_, err := git.PlainInit(bare, true)
		require.NoError(t, err)
	}
	t.Run("remote recreated empty, fresh clone", func(t *testing.T) {
		bare, _, second := setup(t)
		recreate(t, bare)
		fresh := open(t, bare)
		fresh.RequireDescent(second)
		var rw *RewrittenError
		err := fresh.ResetToRemote(ctx)
		require.ErrorAs(t, err, &rw)
		assert.True(t, rw.Now.IsZero())
		assert.Contains(t, err.Error(), "is gone, and this clone does not hold "+second.String()[:12])
	})

	t.Run("remote recreated empty, kept clone", func(t *testing.T) {
		bare := bareRemote(t)
		r := open(t, bare)
		head, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first"))
		require.NoError(t, err)
		require.NoError(t, r.Push(ctx))
		recreate(t, bare)
		r.RequireDescent(head)
		require.NoError(t, r.ResetToRemote(ctx))
		require.NoError(t, r.Push(ctx))
		_, remote := remoteTree(t, bare)
		assert.Equal(t, head, remote.Hash)
	})

	t.Run("zero forgets the line", func(t *testing.T) {
		bare, first, second := setup(t)
		forcePush(t, bare, first)
		fresh := open(t, bare)
		fresh.RequireDescent(second)
		require.Error(t, fresh.ResetToRemote(ctx))
		fresh.RequireDescent(plumbing.ZeroHash)
		require.NoError(t, fresh.ResetToRemote(ctx))
	})
}
