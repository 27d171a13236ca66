// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remoteBranch is the commit of branch name in a bare repository, zero
// when it has none.
func remoteBranch(t *testing.T, bare, name string) plumbing.Hash {
	t.Helper()
	repo, err := git.PlainOpen(bare)
	require.NoError(t, err)
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(name), true)
	if err != nil {
		return plumbing.ZeroHash
	}
	return ref.Hash()
}

func TestProposalBranchBesideTheBranch(t *testing.T) {
	ctx := context.Background()
	bare := bareRemote(t)
	r := open(t, bare)
	main, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("main"))
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, r.Push(ctx))

	proposal := rendered()
	proposal["clusters/b/new.yaml"] = []byte("kind: ServiceImport\n")
	delete(proposal, "status/web/api.yaml")
	const name = "mcs-gitops/proposals/service/shop/cart"
	h, changed, err := r.CommitOn(name, main, proposal, treeRoots, "propose cart")
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, r.PushBranch(ctx, name, r.Wrote))
	assert.Equal(t, h, remoteBranch(t, bare, name))

	head, err := r.Head()
	require.NoError(t, err)
	assert.Equal(t, main, head, "the loop's branch does not move")
	files, _ := remoteTree(t, bare)
	assert.NotContains(t, files, "deploy/mcs/clusters/b/new.yaml", "main does not get the proposal")

	// What the proposal changes against main is exactly the edit.
	out, err := exec.Command("git", "--git-dir", bare, "diff", "--name-status", main.String(), h.String()).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "A\tdeploy/mcs/clusters/b/new.yaml\nD\tdeploy/mcs/status/web/api.yaml\n", string(out))

	again, changed, err := r.CommitOn(name, main, proposal, treeRoots, "propose cart")
	require.NoError(t, err)
	assert.False(t, changed, "same parent, same tree: kept")
	assert.Equal(t, h, again)

	// main moves on: the proposal is rebuilt on top of it and force-pushed.
	next := rendered()
	next["status/web/api.yaml"] = []byte("churn\n")
	main2, _, err := r.Commit(next, treeRoots, StaticMessage("churn"))
	require.NoError(t, err)
	require.NoError(t, r.Push(ctx))
	h2, changed, err := r.CommitOn(name, main2, proposal, treeRoots, "propose cart")
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, r.PushBranch(ctx, name, r.Wrote))
	assert.Equal(t, h2, remoteBranch(t, bare, name))
	out, err = exec.Command("git", "--git-dir", bare, "merge-base", "--is-ancestor", main2.String(), h2.String()).CombinedOutput()
	assert.NoError(t, err, "the rebuilt proposal is a fast-forward of main: %s", out)

	require.NoError(t, r.DeleteBranch(ctx, name))
	assert.True(t, remoteBranch(t, bare, name).IsZero())
	require.NoError(t, r.DeleteBranch(ctx, name), "deleting a branch that is gone is not an error")

	_, _, err = r.CommitOn("main", main2, proposal, treeRoots, "x")
	assert.ErrorContains(t, err, "the branch the loop commits to")
	assert.True(t, strings.HasPrefix(name, "mcs-gitops/"))
}

// TestOverlapSaysWhenAProposalMergesCleanly checks Overlap against git's
// own merge: no overlap is a clean merge without rebuilding, an overlap
// is named by path.
func TestOverlapSaysWhenAProposalMergesCleanly(t *testing.T) {
	ctx := context.Background()
	bare := bareRemote(t)
	r := open(t, bare)
	const name = "mcs-gitops/proposals/service/shop/cart"
	_, known, err := r.Overlap(name, plumbing.ZeroHash)
	require.NoError(t, err)
	assert.False(t, known, "no branch yet: only building it tells")

	base, _, err := r.Commit(rendered(), treeRoots, StaticMessage("main"))
	require.NoError(t, err)
	proposal := rendered()
	proposal["clusters/b/new.yaml"] = []byte("kind: ServiceImport\n")
	proposal["status/web/api.yaml"] = []byte("namespace: web\nname: api\nheld: [b]\n")
	_, _, err = r.CommitOn(name, base, proposal, treeRoots, "propose cart")
	require.NoError(t, err)
	require.NoError(t, r.PushBranch(ctx, name, r.Wrote))

	paths, known, err := r.Overlap(name, base)
	require.NoError(t, err)
	assert.True(t, known)
	assert.Empty(t, paths, "the branch has not moved")

	// Churn in another file: git merges the proposal cleanly.
	churn := rendered()
	churn["clusters/a/web/api/serviceimport.yaml"] = []byte("kind: ServiceImport\nips: [10.0.0.9]\n")
	head, _, err := r.Commit(churn, treeRoots, StaticMessage("churn"))
	require.NoError(t, err)
	require.NoError(t, r.Push(ctx))
	paths, known, err = r.Overlap(name, head)
	require.NoError(t, err)
	assert.True(t, known)
	assert.Empty(t, paths)
	assert.True(t, mergesCleanly(t, bare, head, name), "disjoint files merge")

	// The branch changes a file the proposal changes too.
	churn["status/web/api.yaml"] = []byte("namespace: web\nname: api\nendpoints: 3\n")
	head, _, err = r.Commit(churn, treeRoots, StaticMessage("status"))
	require.NoError(t, err)
	require.NoError(t, r.Push(ctx))
	paths, known, err = r.Overlap(name, head)
	require.NoError(t, err)
	assert.True(t, known)
	assert.Equal(t, []string{"deploy/mcs/status/web/api.yaml"}, paths)
	assert.False(t, mergesCleanly(t, bare, head, name), "this one conflicts")
}

// mergesCleanly asks git whether branch merges into commit without a
// conflict.
func mergesCleanly(t *testing.T, bare string, commit plumbing.Hash, branch string) bool {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", bare, "merge-tree", "--write-tree", commit.String(), "refs/heads/"+branch).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "CONFLICT") {
		require.NoError(t, err, string(out))
	}
	return err == nil
}

// TestPushBranchNeverOverwritesSomeoneElsesCommit: a person's commit on a
// proposal branch is left as it is; the loop's own commit, even one a
// clone that restarted does not remember pushing, is rebuilt over.
func TestPushBranchNeverOverwritesSomeoneElsesCommit(t *testing.T) {
	ctx := context.Background()
	bare := bareRemote(t)
	r := open(t, bare)
	base, _, err := r.Commit(rendered(), treeRoots, StaticMessage("main"))
	require.NoError(t, err)
	require.NoError(t, r.Push(ctx))
	const name = "mcs-gitops/proposals/service/shop/cart"
	proposal := rendered()
	proposal["clusters/b/new.yaml"] = []byte("kind: ServiceImport\n")
	_, _, err = r.CommitOn(name, base, proposal, treeRoots, "propose cart")
	require.NoError(t, err)
	require.NoError(t, r.PushBranch(ctx, name, r.Wrote))

	// A restarted loop (a new clone) rebuilds its own commit.
	again := open(t, bare)
	proposal["clusters/c/new.yaml"] = []byte("kind: ServiceImport\n")
	mine, _, err := again.CommitOn(name, base, proposal, treeRoots, "propose cart to c too")
	require.NoError(t, err)
	require.NoError(t, again.PushBranch(ctx, name, again.Wrote))
	assert.Equal(t, mine, remoteBranch(t, bare, name))

	// A reviewer edits the branch.
	work := t.TempDir()
	for _, args := range [][]string{
		{"clone", "-q", "-b", name, bare, work},
		{"-C", work, "rm", "-q", "deploy/mcs/clusters/c/new.yaml"},
		{"-C", work, "-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "-qm", "c does not need cart"},
		{"-C", work, "push", "-q", "origin", name},
	} {
		out, err := exec.Command("git", args...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	edited := remoteBranch(t, bare, name)
	require.NotEqual(t, mine, edited)

	// Neither clone overwrites it, whether or not it pushed before, and
	// not on a second try either: having seen the reviewer's commit is not
	// having pushed it.
	for _, c := range []*Repo{again, r, again, r} {
		proposal["clusters/d/new.yaml"] = []byte("kind: ServiceImport\n")
		_, _, err = c.CommitOn(name, base, proposal, treeRoots, "propose cart to d")
		require.NoError(t, err)
		err = c.PushBranch(ctx, name, c.Wrote)
		require.ErrorIs(t, err, ErrBranchTaken)
		assert.Contains(t, err.Error(), "by Alice")
		assert.Equal(t, edited, remoteBranch(t, bare, name), "the reviewer's commit stays")
	}
}
