// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var clock = func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }

// bareRemote is an empty bare repository on disk: the remote of a test.
func bareRemote(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	_, err := git.PlainInit(dir, true)
	require.NoError(t, err)
	return dir
}

func open(t *testing.T, url string, mod ...func(*Options)) *Repo {
	t.Helper()
	o := Options{URL: url, Branch: "main", Path: "deploy/mcs", Workdir: filepath.Join(t.TempDir(), "clone"),
		Author: Signature{Name: "Sync Bot", Email: "bot@example.com"}, Clock: clock, Log: quiet}
	for _, m := range mod {
		m(&o)
	}
	r, err := Open(context.Background(), o)
	require.NoError(t, err)
	return r
}

// remoteTree lists the files of branch main in a bare repository.
func remoteTree(t *testing.T, bare string) (map[string]string, *object.Commit) {
	t.Helper()
	repo, err := git.PlainOpen(bare)
	require.NoError(t, err)
	ref, err := repo.Reference(plumbing.NewBranchReferenceName("main"), true)
	require.NoError(t, err)
	c, err := repo.CommitObject(ref.Hash())
	require.NoError(t, err)
	tree, err := c.Tree()
	require.NoError(t, err)
	out := map[string]string{}
	require.NoError(t, tree.Files().ForEach(func(f *object.File) error {
		s, err := f.Contents()
		out[f.Name] = s
		return err
	}))
	return out, c
}

var treeRoots = []string{"clusterset.yaml", "clusters", "status"}

func rendered() map[string][]byte {
	return map[string][]byte{
		"clusterset.yaml":                       []byte("kind: ClusterSet\n"),
		"clusters/a/kustomization.yaml":         []byte("resources: [web/api/serviceimport.yaml]\n"),
		"clusters/a/web/api/serviceimport.yaml": []byte("kind: ServiceImport\n"),
		"status/web/api.yaml":                   []byte("namespace: web\nname: api\n"),
	}
}

func TestEmptyRemoteFirstCommitCreatesBranch(t *testing.T) {
	bare := bareRemote(t)
	r := open(t, bare)
	head, err := r.Head()
	require.NoError(t, err)
	assert.True(t, head.IsZero())
	assert.Equal(t, filepath.Join(r.root, "deploy", "mcs"), r.Dir())

	hash, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("first\n\nbody\n"))
	require.NoError(t, err)
	assert.True(t, changed)
	require.NoError(t, r.Push(context.Background()))

	files, c := remoteTree(t, bare)
	assert.Equal(t, hash, c.Hash)
	assert.Equal(t, "kind: ServiceImport\n", files["deploy/mcs/clusters/a/web/api/serviceimport.yaml"])
	assert.Len(t, files, 4)
	assert.Equal(t, "first\n\nbody\n", c.Message)
	assert.Equal(t, "Sync Bot", c.Author.Name)
	assert.Equal(t, "bot@example.com", c.Committer.Email)
	assert.True(t, c.Committer.When.Equal(clock()))
	assert.Empty(t, c.ParentHashes)
}

func TestCommitOnlyWhenChanged(t *testing.T) {
	r := open(t, bareRemote(t))
	files := rendered()
	first, changed, err := r.Commit(files, treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	require.True(t, changed)
	// Something outside the roots is never touched or committed away.
	require.NoError(t, os.WriteFile(filepath.Join(r.root, "README.md"), []byte("hi\n"), 0o644))

	again, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("again"))
	require.NoError(t, err)
	assert.False(t, changed, "identical bytes: no commit")
	assert.Equal(t, first, again)

	files["status/web/api.yaml"] = []byte("namespace: web\nname: api\ntype: Headless\n")
	delete(files, "clusters/a/web/api/serviceimport.yaml")
	files["clusters/a/kustomization.yaml"] = []byte("resources: []\n")
	second, changed, err := r.Commit(files, treeRoots, StaticMessage("second"))
	require.NoError(t, err)
	require.True(t, changed)

	c, err := r.repo.CommitObject(second)
	require.NoError(t, err)
	assert.Equal(t, []plumbing.Hash{first}, c.ParentHashes)
	parent, err := r.repo.CommitObject(first)
	require.NoError(t, err)
	patch, err := parent.Patch(c)
	require.NoError(t, err)
	var paths []string
	for _, fp := range patch.FilePatches() {
		from, to := fp.Files()
		if to != nil {
			paths = append(paths, to.Path())
		} else {
			paths = append(paths, from.Path()+" (removed)")
		}
	}
	assert.ElementsMatch(t, []string{
		"deploy/mcs/clusters/a/kustomization.yaml",
		"deploy/mcs/clusters/a/web/api/serviceimport.yaml (removed)",
		"deploy/mcs/status/web/api.yaml",
	}, paths)

	got, err := r.Files(second)
	require.NoError(t, err)
	assert.Equal(t, files, got, "the commit holds exactly the rendered files")

	// Once synced, the index matches the commit: git itself sees only the
	// untracked README, and go-git's status agrees.
	require.NoError(t, r.SyncIndex())
	if gitBin, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(gitBin, "-C", r.root, "status", "--porcelain").CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, "?? README.md\n", string(out))
	}
	st, err := r.wt.Status()
	require.NoError(t, err)
	for p, s := range st {
		if p != "README.md" {
			t.Errorf("%s: %c%c", p, s.Staging, s.Worktree)
		}
	}
}

// A crash after writing the tree but before committing leaves the files on
// disk; the next Commit must still see them as changed against HEAD.
func TestCommitDecidesAgainstHeadNotWorktree(t *testing.T) {
	r := open(t, bareRemote(t))
	_, err := WriteTree(r.Dir(), rendered(), treeRoots)
	require.NoError(t, err)
	c, err := r.Changes(rendered(), treeRoots)
	require.NoError(t, err)
	assert.Len(t, c.Written, 4)
	_, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("after crash"))
	require.NoError(t, err)
	assert.True(t, changed)
	c, err = r.Changes(rendered(), treeRoots)
	require.NoError(t, err)
	assert.True(t, c.Empty())
}

func TestCommitRefusesFilesOutsideRoots(t *testing.T) {
	r := open(t, bareRemote(t))
	_, _, err := r.Commit(map[string][]byte{"inputs/a.yaml": nil}, []string{"clusters"}, StaticMessage("x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "inputs/a.yaml")
}

func TestReadFileAndFiles(t *testing.T) {
	r := open(t, bareRemote(t))
	files := rendered()
	files["inputs/a.yaml"] = []byte("a\n")
	files["inputs/b.yaml"] = []byte("b\n")
	head, _, err := r.Commit(files, append(treeRoots, "inputs"), StaticMessage("x"))
	require.NoError(t, err)

	b, err := r.ReadFile(head, "clusterset.yaml")
	require.NoError(t, err)
	assert.Equal(t, "kind: ClusterSet\n", string(b))
	_, err = r.ReadFile(head, "inputs/c.yaml")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = r.ReadFile(head, "nothere/c.yaml")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = r.ReadFile(plumbing.ZeroHash, "clusterset.yaml")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	got, err := r.Files(head, "inputs", "clusterset.yaml", "missing")
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{
		"inputs/a.yaml": []byte("a\n"), "inputs/b.yaml": []byte("b\n"), "clusterset.yaml": []byte("kind: ClusterSet\n"),
	}, got)
	empty, err := r.Files(plumbing.ZeroHash)
	require.NoError(t, err)
	assert.Empty(t, empty)
}

func TestReuseCloneFetchesAndResets(t *testing.T) {
	bare := bareRemote(t)
	workdir := filepath.Join(t.TempDir(), "clone")
	a := open(t, bare, func(o *Options) { o.Workdir = workdir })
	first, _, err := a.Commit(rendered(), treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	require.NoError(t, a.Push(context.Background()))

	// Another writer moves the remote on.
	other := open(t, bare)
	files := rendered()
	files["status/web/api.yaml"] = []byte("changed\n")
	second, _, err := other.Commit(files, treeRoots, StaticMessage("second"))
	require.NoError(t, err)
	require.NoError(t, other.Push(context.Background()))

	// A local commit in the old clone that was never pushed is dropped.
	files["status/web/api.yaml"] = []byte("local only\n")
	_, _, err = a.Commit(files, treeRoots, StaticMessage("local"))
	require.NoError(t, err)

	b := open(t, bare, func(o *Options) { o.Workdir = workdir })
	head, err := b.Head()
	require.NoError(t, err)
	assert.Equal(t, second, head)
	assert.NotEqual(t, first, head)
	data, err := os.ReadFile(filepath.Join(b.Dir(), "status", "web", "api.yaml"))
	require.NoError(t, err)
	assert.Equal(t, "changed\n", string(data))

	_, err = Open(context.Background(), Options{URL: bareRemote(t), Workdir: workdir})
	require.Error(t, err, "a workdir cloned from another remote is not reused")
}

func TestFileURLIsCloned(t *testing.T) {
	bare := bareRemote(t)
	r := open(t, "file://"+bare)
	_, _, err := r.Commit(rendered(), treeRoots, StaticMessage("x"))
	require.NoError(t, err)
	require.NoError(t, r.Push(context.Background()))
	files, _ := remoteTree(t, bare)
	assert.Len(t, files, 4)
}

func TestLocalRepositoryInPlace(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	// Existing history on another branch.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("hi\n"), 0o644))
	wt, err := repo.Worktree()
	require.NoError(t, err)
	_, err = wt.Add("README.md")
	require.NoError(t, err)
	base, err := wt.Commit("readme", &git.CommitOptions{Author: &object.Signature{Name: "u", Email: "u@x", When: clock()}})
	require.NoError(t, err)

	r, err := Open(context.Background(), Options{URL: dir, Branch: "rendered", Clock: clock})
	require.NoError(t, err)
	assert.Equal(t, dir, r.Dir())
	hash, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("render"))
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, r.Push(context.Background()), "no origin: nothing to push")
	require.NoError(t, r.ResetToRemote(context.Background()))

	ref, err := repo.Reference(plumbing.NewBranchReferenceName("rendered"), true)
	require.NoError(t, err)
	assert.Equal(t, hash, ref.Hash())
	c, err := repo.CommitObject(hash)
	require.NoError(t, err)
	assert.Equal(t, []plumbing.Hash{base}, c.ParentHashes, "the new branch starts from HEAD")
	assert.Equal(t, "mcs-gitops", c.Author.Name)
	_, err = c.File("README.md")
	assert.NoError(t, err)
}

func TestLocalEmptyRepository(t *testing.T) {
	dir := t.TempDir()
	_, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	r, err := Open(context.Background(), Options{URL: dir})
	require.NoError(t, err)
	_, changed, err := r.Commit(rendered(), treeRoots, StaticMessage("x"))
	require.NoError(t, err)
	assert.True(t, changed)
	h, err := r.repo.Reference(plumbing.NewBranchReferenceName("main"), false)
	require.NoError(t, err)
	assert.False(t, h.Hash().IsZero())
}

func TestOpenRejects(t *testing.T) {
	for name, o := range map[string]Options{
		"no url":           {},
		"escaping path":    {URL: "/x", Path: "../up", Workdir: "/tmp/x"},
		"absolute path":    {URL: "/x", Path: "/abs", Workdir: "/tmp/x"},
		"bad branch":       {URL: "/x", Branch: "a b", Workdir: "/tmp/x"},
		"clone no workdir": {URL: "https://example.com/x.git"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(context.Background(), o)
			assert.Error(t, err)
		})
	}
}

func TestCloneErrorDoesNotLeakURLPassword(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for url, secret := range map[string]string{
		"http://bot:s3cr3t-pass@127.0.0.1:1/x.git": "s3cr3t-pass",
		// Forges accept a token as the whole userinfo.
		"http://ghp_abcdefghijklmnopqrstuvwxyz0123456789@127.0.0.1:1/x.git":  "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"https://glpat-AbCdEf0123456789xyzw:x-oauth-basic@127.0.0.1:1/x.git": "glpat-AbCdEf0123456789xyzw",
	} {
		_, err := Open(context.Background(), Options{URL: url, Workdir: filepath.Join(t.TempDir(), "c"), Log: log})
		require.Error(t, err)
		assert.NotContains(t, err.Error(), secret)
		assert.NotContains(t, logs.String(), secret)
		assert.True(t, strings.Contains(err.Error(), "127.0.0.1"), err.Error())
	}
}

// Commit compares files with the ones it committed last, by slice: a new
// map sharing the unchanged slices commits exactly what was changed,
// added and removed; the same files again commit nothing; and once the
// branch is somewhere else, the comparison is with that commit's tree.
func TestCommitComparesWithWhatItCommitted(t *testing.T) {
	r := open(t, bareRemote(t))
	first := rendered()
	c1, _, err := r.Commit(first, treeRoots, StaticMessage("first"))
	require.NoError(t, err)

	next := maps.Clone(first)
	const some = "clusters/a/web/api/serviceimport.yaml"
	delete(next, some)
	next["status/web/added.yaml"] = []byte("added: true\n")
	next["status/web/api.yaml"] = []byte("changed: true\n")
	c2, changed, err := r.Commit(next, treeRoots, StaticMessage("second"))
	require.NoError(t, err)
	require.True(t, changed)
	got, err := r.Files(c2)
	require.NoError(t, err)
	require.Equal(t, next, got)

	_, changed, err = r.Commit(maps.Clone(next), treeRoots, StaticMessage("nothing"))
	require.NoError(t, err)
	require.False(t, changed)

	// The branch back at the first commit, as a reset would leave it.
	require.NoError(t, r.repo.Storer.SetReference(plumbing.NewHashReference(r.branch, c1)))
	c, err := r.Changes(maps.Clone(next), treeRoots)
	require.NoError(t, err)
	require.Equal(t, []string{some}, c.Removed)
	require.Equal(t, []string{"status/web/added.yaml", "status/web/api.yaml"}, c.Written)
}

// ExpectChanges narrows the next Commit to the paths given, when they are
// said against the map the last Commit got; said against another map,
// or with HEAD moved, it is not trusted and everything is compared.
func TestCommitTrustsExpectedChangesOnlyAgainstItsLastFiles(t *testing.T) {
	r := open(t, bareRemote(t))
	first := rendered()
	_, _, err := r.Commit(first, treeRoots, StaticMessage("first"))
	require.NoError(t, err)

	next := maps.Clone(first)
	next["status/web/api.yaml"] = []byte("changed: 1\n")
	delete(next, "clusters/a/web/api/serviceimport.yaml")
	r.ExpectChanges(first, []string{"status/web/api.yaml", "clusters/a/web/api/serviceimport.yaml", "status/web/api.yaml"}) // a path twice is one path
	c2, changed, err := r.Commit(next, treeRoots, StaticMessage("second"))
	require.NoError(t, err)
	require.True(t, changed)
	got, err := r.Files(c2)
	require.NoError(t, err)
	require.Equal(t, next, got)

	// Said against a map the last Commit did not get: a change outside
	// the paths given is still found.
	third := maps.Clone(next)
	third["status/web/other.yaml"] = []byte("other: 1\n")
	r.ExpectChanges(first, []string{"status/web/api.yaml"})
	c3, changed, err := r.Commit(third, treeRoots, StaticMessage("third"))
	require.NoError(t, err)
	require.True(t, changed)
	got, err = r.Files(c3)
	require.NoError(t, err)
	require.Equal(t, third, got)

	// Used once: the Commit after it compares everything again.
	fourth := maps.Clone(third)
	fourth["status/web/fourth.yaml"] = []byte("fourth: 1\n")
	r.ExpectChanges(third, nil)
	_, changed, err = r.Commit(maps.Clone(third), treeRoots, StaticMessage("nothing"))
	require.NoError(t, err)
	require.False(t, changed)
	c4, changed, err := r.Commit(fourth, treeRoots, StaticMessage("fourth"))
	require.NoError(t, err)
	require.True(t, changed)
	got, err = r.Files(c4)
	require.NoError(t, err)
	require.Equal(t, fourth, got)
}
