// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-github/v87/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// These check the shape of the one request Find sends to GitHub and
// GitLab, which a real server is not at hand to prove: the filters that
// keep other branches and forks out. They are not fakes of either forge.

func TestGitHubFindRequest(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v3/repos/o/r/pulls", r.URL.Path)
		query = r.URL.RawQuery
		// The newest from a fork of the same name (listed first, as
		// GitHub would not, but the check must not rely on that), then
		// ours.
		fmt.Fprint(w, `[
 {"number": 9, "state": "open", "head": {"ref": "mcs-gitops/proposals/x", "repo": {"full_name": "mallory/r"}}, "base": {"ref": "main"}},
 {"number": 8, "state": "closed", "merged_at": "2026-01-01T00:00:00Z", "merge_commit_sha": "m",
  "head": {"ref": "mcs-gitops/proposals/x", "sha": "h", "repo": {"full_name": "o/r"}}, "base": {"ref": "main"}}]`)
	}))
	defer srv.Close()
	c, err := github.NewClient(github.WithEnterpriseURLs(srv.URL+"/api/v3/", srv.URL+"/api/uploads/"))
	require.NoError(t, err)
	g := &githubClient{c: c, owner: "o", name: "r"}
	r, err := g.Find(context.Background(), "mcs-gitops/proposals/x")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, 8, r.Number, "a fork's branch of the same name is not ours")
	assert.Equal(t, Merged, r.State)
	assert.Equal(t, "direction=desc&head=o%3Amcs-gitops%2Fproposals%2Fx&per_page=10&sort=created&state=all", query)
}

func TestGitLabFindRequest(t *testing.T) {
	const token = "glpat-0123456789abcdefghij"
	var query, sent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v4/projects/g/sub/r/merge_requests", r.URL.Path)
		assert.Equal(t, "/api/v4/projects/g%2Fsub%2Fr/merge_requests", r.URL.RawPath, "the project path is one escaped segment")
		query, sent = r.URL.RawQuery, r.Header.Get("PRIVATE-TOKEN")
		fmt.Fprint(w, `[
 {"iid": 5, "state": "opened", "source_branch": "mcs-gitops/proposals/x", "source_project_id": 2, "target_project_id": 1},
 {"iid": 4, "state": "merged", "source_branch": "mcs-gitops/proposals/x", "source_project_id": 1, "target_project_id": 1,
  "sha": "h", "merge_commit_sha": "m", "target_branch": "main"}]`)
	}))
	defer srv.Close()
	c := gitlabAt(t, srv.URL, "https://gitlab.corp.example/g/sub/r.git", token)
	r, err := c.Find(context.Background(), "mcs-gitops/proposals/x")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, 4, r.Number, "a fork's branch of the same name is not ours")
	assert.Equal(t, Merged, r.State)
	assert.Equal(t, "m", r.MergeCommitSHA)
	assert.Equal(t, token, sent, "a token goes as PRIVATE-TOKEN")
	assert.Equal(t, "order_by=created_at&per_page=20&sort=desc&source_branch=mcs-gitops%2Fproposals%2Fx&state=all", query)
}

// gitlabAt is the GitLab client New makes for a repository at gitURL,
// with the API at serverURL and token as its credential.
func gitlabAt(t *testing.T, serverURL, gitURL, token string) Client {
	t.Helper()
	cs := &v1alpha1.ClusterSet{}
	cs.Spec.Git.URL = gitURL
	cs.Spec.Review = v1alpha1.ReviewOptions{Enabled: true, Forge: v1alpha1.ForgeOptions{
		Provider: v1alpha1.ForgeGitLab, URL: serverURL, Token: &v1alpha1.CredentialSource{Env: "T"},
	}}
	c, err := New(cs, func(*v1alpha1.CredentialSource) ([]byte, error) { return []byte(token), nil })
	require.NoError(t, err)
	return c
}
