// SPDX-License-Identifier: Apache-2.0

package gitea

import (
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Push commits files (path → content) on top of base in the repository at
// cloneURL and pushes the commit to branch over HTTP, authenticating with
// token as the password, as the loop would push a proposal. It returns the
// commit's hash. The clone lives in memory.
func Push(t testing.TB, cloneURL, token, base, branch string, files map[string]string) string {
	t.Helper()
	auth := &http.BasicAuth{Username: "git", Password: token}
	repo, err := git.Clone(memory.NewStorage(), memfs.New(), &git.CloneOptions{
		URL: cloneURL, Auth: auth, ReferenceName: plumbing.NewBranchReferenceName(base), SingleBranch: true,
	})
	if err != nil {
		t.Fatalf("gitea.Push: cloning %s: %v", cloneURL, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		f, err := wt.Filesystem.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	sig := &object.Signature{Name: "mcs-gitops", Email: "mcs-gitops@localhost", When: time.Now()}
	h, err := wt.Commit("proposal "+branch, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatalf("gitea.Push: committing: %v", err)
	}
	err = repo.Push(&git.PushOptions{
		Auth:     auth,
		RefSpecs: []config.RefSpec{config.RefSpec(plumbing.NewBranchReferenceName(base).String() + ":" + plumbing.NewBranchReferenceName(branch).String())},
		Force:    true,
	})
	if err != nil {
		t.Fatalf("gitea.Push: pushing %s: %v", branch, err)
	}
	return h.String()
}
