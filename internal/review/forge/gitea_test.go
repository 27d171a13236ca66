// SPDX-License-Identifier: Apache-2.0

package forge_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/review/forge"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/gitea"
)

// giteaConfig is a ClusterSet whose repository is cloneURL on the Gitea at
// url, with the forge token in environment variable FORGE_TOKEN.
func giteaConfig(url, cloneURL string) *v1alpha1.ClusterSet {
	cs := &v1alpha1.ClusterSet{}
	cs.Spec.Git.URL = cloneURL
	cs.Spec.Review = v1alpha1.ReviewOptions{Enabled: true, Forge: v1alpha1.ForgeOptions{
		Provider: v1alpha1.ForgeGitea, URL: url, Token: &v1alpha1.CredentialSource{Env: "FORGE_TOKEN"},
	}}
	return cs
}

// reader hands out token for FORGE_TOKEN, as the command's reader would
// read the environment.
func reader(token string) func(*v1alpha1.CredentialSource) ([]byte, error) {
	return func(cs *v1alpha1.CredentialSource) ([]byte, error) {
		if cs.Env != "FORGE_TOKEN" {
			return nil, fmt.Errorf("unexpected source %+v", cs)
		}
		return []byte(token + "\n"), nil
	}
}

// TestGitea drives proposals through their lives on a real Gitea: the
// loop's identity (the admin token) pushes a branch and opens, finds,
// updates and closes requests; a second user merges one as a reviewer
// would.
func TestGitea(t *testing.T) {
	s := gitea.Start(t)
	t.Logf("gitea took %s to start", s.Started)
	clone := s.CreateRepo(t, "fleet")
	reviewer := s.User(t, "reviewer")
	s.Collaborator(t, "fleet", reviewer.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The loop's identity has exactly the scopes docs/forge.md lists.
	loop := s.AdminToken(t, "write:repository", "write:issue")
	c, err := forge.New(giteaConfig(s.URL, clone), reader(loop))
	require.NoError(t, err)

	const a, b = "mcs-gitops/proposals/import-web", "mcs-gitops/proposals/import-db"
	none, err := c.Find(ctx, a)
	require.NoError(t, err)
	assert.Nil(t, none, "no request from a branch that has none")

	t.Run("open, find, update, merge", func(t *testing.T) {
		sha := gitea.Push(t, clone, loop, "main", a, map[string]string{"clusters/c1/web.yaml": "kind: ServiceImport\n"})
		opened, err := c.Open(ctx, forge.Change{
			Branch: a, Base: "main", Title: "Import web into c1", Body: "first body",
			Labels: []string{"mcs-gitops", "import"},
		})
		require.NoError(t, err)
		assert.Equal(t, forge.Open, opened.State)
		assert.Equal(t, a, opened.Branch)
		assert.Equal(t, "main", opened.Base)
		assert.Equal(t, sha, opened.HeadSHA)
		assert.Equal(t, []string{"import", "mcs-gitops"}, opened.Labels, "labels created on the fly, sorted")
		assert.Contains(t, opened.URL, fmt.Sprintf("/lab/fleet/pulls/%d", opened.Number))
		assert.Empty(t, opened.MergeCommitSHA)

		found, err := c.Find(ctx, a)
		require.NoError(t, err)
		require.NotNil(t, found)
		assert.Equal(t, opened.Number, found.Number)

		_, err = c.Update(ctx, opened.Number, forge.Change{
			Title: "Import web into c1 and c2", Body: "second body", Labels: []string{"mcs-gitops", "needs-review"},
		})
		require.NoError(t, err)
		got, err := c.Get(ctx, opened.Number)
		require.NoError(t, err)
		assert.Equal(t, forge.Open, got.State)
		assert.Equal(t, "Import web into c1 and c2", got.Title)
		assert.Equal(t, "second body", got.Body)
		assert.Equal(t, []string{"mcs-gitops", "needs-review"}, got.Labels, "labels replaced, not added")

		s.Merge(t, reviewer.Token, "fleet", opened.Number)
		merged, err := c.Get(ctx, opened.Number)
		require.NoError(t, err)
		assert.Equal(t, forge.Merged, merged.State)
		var main struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		code, body := s.API(t, s.Token, http.MethodGet, "repos/lab/fleet/branches/main", nil, &main)
		require.Equal(t, http.StatusOK, code, "%s", body)
		assert.Equal(t, main.Commit.ID, merged.MergeCommitSHA, "the merge commit is main's head")
		assert.NotEqual(t, sha, merged.MergeCommitSHA)

		found, err = c.Find(ctx, a)
		require.NoError(t, err)
		require.NotNil(t, found)
		assert.Equal(t, forge.Merged, found.State, "Find sees merged requests")

		require.NoError(t, c.Close(ctx, opened.Number, "too late"), "closing a merged request is a no-op")
		again, err := c.Get(ctx, opened.Number)
		require.NoError(t, err)
		assert.Equal(t, forge.Merged, again.State)
	})

	t.Run("close, reopen on the same branch", func(t *testing.T) {
		gitea.Push(t, clone, loop, "main", b, map[string]string{"clusters/c1/db.yaml": "kind: ServiceImport\n"})
		first, err := c.Open(ctx, forge.Change{Branch: b, Base: "main", Title: "Import db", Body: "x"})
		require.NoError(t, err)
		require.NoError(t, c.Close(ctx, first.Number, "Withdrawn: the export went away."))
		closed, err := c.Get(ctx, first.Number)
		require.NoError(t, err)
		assert.Equal(t, forge.Closed, closed.State)
		assert.Empty(t, closed.MergeCommitSHA)
		var comments []struct {
			Body string `json:"body"`
		}
		s.API(t, s.Token, http.MethodGet, fmt.Sprintf("repos/lab/fleet/issues/%d/comments", first.Number), nil, &comments)
		require.Len(t, comments, 1)
		assert.Equal(t, "Withdrawn: the export went away.", comments[0].Body)

		found, err := c.Find(ctx, b)
		require.NoError(t, err)
		require.NotNil(t, found)
		assert.Equal(t, forge.Closed, found.State)

		second, err := c.Open(ctx, forge.Change{Branch: b, Base: "main", Title: "Import db again"})
		require.NoError(t, err)
		found, err = c.Find(ctx, b)
		require.NoError(t, err)
		require.NotNil(t, found)
		assert.Equal(t, second.Number, found.Number, "Find returns the newest request of the branch")
		assert.Equal(t, forge.Open, found.State)

		// A reviewer closing it is a rejection.
		s.ClosePull(t, reviewer.Token, "fleet", second.Number)
		rejected, err := c.Get(ctx, second.Number)
		require.NoError(t, err)
		assert.Equal(t, forge.Closed, rejected.State)
	})

	t.Run("not found", func(t *testing.T) {
		_, err := c.Get(ctx, 9999)
		require.Error(t, err)
		assert.True(t, errors.Is(err, forge.ErrNotFound), "%v", err)
		none, err := c.Find(ctx, "mcs-gitops/proposals/never")
		require.NoError(t, err)
		assert.Nil(t, none)
	})

	t.Run("bad token", func(t *testing.T) {
		const bad = "0123456789abcdef0123456789abcdef01234567"
		c, err := forge.New(giteaConfig(s.URL, clone), reader(bad))
		if err == nil {
			_, err = c.Find(ctx, a)
		}
		require.Error(t, err)
		t.Logf("the error: %v", err)
		assert.True(t, errors.Is(err, forge.ErrUnauthorized), "%v", err)
		assert.Contains(t, err.Error(), "environment variable FORGE_TOKEN", "the error says where the token came from")
		assert.NotContains(t, err.Error(), bad, "the token never reaches an error")
		assert.False(t, strings.Contains(err.Error(), loop))
	})
}
