// SPDX-License-Identifier: Apache-2.0

package gitea_test

import (
	"net/http"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/gitea"
)

// TestStart starts a Gitea, creates a repository, a second user and a
// pull request from a pushed branch, and merges it as that user: what the
// forge tests build on.
func TestStart(t *testing.T) {
	s := gitea.Start(t)
	clone := s.CreateRepo(t, "r")
	u := s.User(t, "reviewer")
	s.Collaborator(t, "r", u.Name)
	sha := gitea.Push(t, clone, s.Token, "main", "feature", map[string]string{"a.txt": "a\n"})

	var pr struct {
		Number int `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	code, body := s.API(t, s.Token, http.MethodPost, "repos/lab/r/pulls",
		map[string]any{"head": "feature", "base": "main", "title": "t"}, &pr)
	if code != http.StatusCreated {
		t.Fatalf("creating the pull request: %d %s", code, body)
	}
	if pr.Head.SHA != sha {
		t.Errorf("head sha %q, pushed %q", pr.Head.SHA, sha)
	}
	s.Merge(t, u.Token, "r", pr.Number)

	var got struct {
		Merged   bool `json:"merged"`
		MergedBy struct {
			Login string `json:"login"`
		} `json:"merged_by"`
	}
	s.API(t, s.Token, http.MethodGet, "repos/lab/r/pulls/1", nil, &got)
	if !got.Merged || got.MergedBy.Login != u.Name {
		t.Errorf("after the merge: merged=%v by %q, want true by %q", got.Merged, got.MergedBy.Login, u.Name)
	}
	t.Logf("gitea started in %s", s.Started)
}
