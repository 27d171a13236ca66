// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushLinks commits the given symbolic links (path in the repository ->
// target) on top of the remote's main, as a merged pull request would. It
// uses the git binary: go-git itself refuses to stage a path below a link.
func pushLinks(t *testing.T, bare string, links map[string]string) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	require.NoError(t, err, "go-git's file:// transport needs the git binary too")
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(gitBin, append([]string{"-C", dir, "-c", "user.name=pr", "-c", "user.email=pr@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	run("clone", "-q", "-b", "main", bare, ".")
	for p, target := range links {
		run("rm", "-r", "-q", "--ignore-unmatch", p)
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.Symlink(target, full))
		run("add", p)
	}
	run("commit", "-q", "-m", "links")
	run("push", "-q", "origin", "main")
}

// A relative link pushed to the remote must not make sync write outside the
// worktree, nor fail every cycle after: the next commit replaces the links
// with the rendered files, and reading a commit never returns a link.
func TestCommitReplacesLinksPushedToTheRemote(t *testing.T) {
	bare := bareRemote(t)
	first := open(t, bare)
	_, _, err := first.Commit(rendered(), treeRoots, StaticMessage("first\n"))
	require.NoError(t, err)
	require.NoError(t, first.Push(t.Context()))

	pushLinks(t, bare, map[string]string{
		"deploy/mcs/clusters/a":          "../../../../escaped", // out of the worktree
		"deploy/mcs/status/web/api.yaml": "../../../../../etc/hostname",
		"deploy/mcs/status/extra.yaml":   "../../clusterset.yaml",
	})

	r := open(t, bare)
	outside := filepath.Join(filepath.Dir(r.root), "escaped")
	require.NoError(t, os.MkdirAll(outside, 0o755))

	links, err := r.Files(mustHead(t, r))
	require.NoError(t, err)
	assert.NotContains(t, links, "status/extra.yaml", "Files never returns a link's target as content")

	hash, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("second\n"))
	require.NoError(t, err)
	assert.True(t, changed)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written through the link")

	got, err := r.Files(hash)
	require.NoError(t, err)
	assert.Equal(t, rendered(), got)
	c, err := object.GetCommit(r.repo.Storer, hash)
	require.NoError(t, err)
	tree, err := c.Tree()
	require.NoError(t, err)
	require.NoError(t, tree.Files().ForEach(func(f *object.File) error {
		assert.Equal(t, filemode.Regular, f.Mode, "%s", f.Name)
		return nil
	}))

	_, changed, err = r.Commit(rendered(), treeRoots, StaticMessage("third\n"))
	require.NoError(t, err)
	assert.False(t, changed, "the next cycle is quiet")
}

// The sub-path itself turned into a link is refused, not followed.
func TestCommitRefusesALinkedSubPath(t *testing.T) {
	bare := bareRemote(t)
	first := open(t, bare)
	_, _, err := first.Commit(rendered(), treeRoots, StaticMessage("first\n"))
	require.NoError(t, err)
	require.NoError(t, first.Push(t.Context()))
	pushLinks(t, bare, map[string]string{"deploy/mcs": "/tmp"})

	r := open(t, bare)
	_, _, err = r.Commit(rendered(), treeRoots, StaticMessage("second\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "path deploy/mcs in the repository")
	assert.Contains(t, err.Error(), "symbolic link")
}

func mustHead(t *testing.T, r *Repo) (h [20]byte) {
	t.Helper()
	head, err := r.Head()
	require.NoError(t, err)
	return head
}
