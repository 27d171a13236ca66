// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v87/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func TestGitHubEndpoints(t *testing.T) {
	for raw, want := range map[string][2]string{
		"":                                {"", "https://api.github.com"},
		"https://github.com":              {"", "https://api.github.com"},
		"https://ghe.corp.example":        {"ghe.corp.example", "https://ghe.corp.example/api/v3"},
		"https://ghe.corp.example/":       {"ghe.corp.example", "https://ghe.corp.example/api/v3"},
		"https://ghe.corp.example/api/v3": {"ghe.corp.example", "https://ghe.corp.example/api/v3"},
		"https://ghe.corp.example:8443":   {"ghe.corp.example:8443", "https://ghe.corp.example:8443/api/v3"},
	} {
		domain, api, err := githubEndpoints(raw)
		if assert.NoError(t, err, raw) {
			assert.Equal(t, want, [2]string{domain, api}, raw)
		}
	}
	for _, raw := range []string{"http://ghe.corp.example", "https://ghe.corp.example/github", "ghe.corp.example", "https://x:y@ghe.corp.example"} {
		_, _, err := githubEndpoints(raw)
		assert.Error(t, err, raw)
	}
}

func TestGitLabDomain(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                   "",
		"https://gitlab.com":                 "",
		"https://gitlab.corp.example/":       "https://gitlab.corp.example",
		"https://gitlab.corp.example/api/v4": "https://gitlab.corp.example",
		"https://corp.example/gitlab":        "https://corp.example/gitlab",
	} {
		got, err := gitlabDomain(raw)
		if assert.NoError(t, err, raw) {
			assert.Equal(t, want, got, raw)
		}
	}
}

func TestGitHubRequest(t *testing.T) {
	now := github.Timestamp{Time: time.Now()}
	base := func() *github.PullRequest {
		return &github.PullRequest{
			Number: new(7), HTMLURL: new("https://github.com/o/r/pull/7"), State: new("open"),
			Title: new("t"), Body: new("b"), MergeCommitSHA: new("testmerge"),
			Head:   &github.PullRequestBranch{Ref: new("mcs-gitops/proposals/x"), SHA: new("head")},
			Base:   &github.PullRequestBranch{Ref: new("main")},
			Labels: []*github.Label{{Name: new("z")}, {Name: new("a")}},
		}
	}
	open := githubRequest(base())
	assert.Equal(t, &Request{
		Number: 7, URL: "https://github.com/o/r/pull/7", State: Open, Branch: "mcs-gitops/proposals/x",
		Base: "main", HeadSHA: "head", Title: "t", Body: "b", Labels: []string{"a", "z"},
	}, open, "an open request's test-merge SHA is not a merge commit")

	listed := base()
	listed.State, listed.MergedAt, listed.MergeCommitSHA = new("closed"), &now, new("m")
	r := githubRequest(listed)
	assert.Equal(t, Merged, r.State, "a listed request says merged_at, not merged")
	assert.Equal(t, "m", r.MergeCommitSHA)

	got := base()
	got.State, got.Merged, got.MergedAt, got.MergeCommitSHA = new("closed"), new(true), &now, new("m")
	assert.Equal(t, Merged, githubRequest(got).State)

	closed := base()
	closed.State = new("closed")
	r = githubRequest(closed)
	assert.Equal(t, Closed, r.State)
	assert.Empty(t, r.MergeCommitSHA)
}

func TestGitLabRequest(t *testing.T) {
	mr := &gitlab.BasicMergeRequest{
		IID: 3, WebURL: "https://gitlab.com/g/r/-/merge_requests/3", State: "opened", Title: "t", Description: "b",
		SourceBranch: "mcs-gitops/proposals/x", TargetBranch: "main", SHA: "head",
		MergeCommitSHA: "", Labels: gitlab.Labels{"z", "a"},
	}
	assert.Equal(t, &Request{
		Number: 3, URL: "https://gitlab.com/g/r/-/merge_requests/3", State: Open, Branch: "mcs-gitops/proposals/x",
		Base: "main", HeadSHA: "head", Title: "t", Body: "b", Labels: []string{"a", "z"},
	}, gitlabRequest(mr))
	for state, want := range map[string]State{"opened": Open, "locked": Open, "closed": Closed, "merged": Merged} {
		m := *mr
		m.State = state
		assert.Equal(t, want, gitlabRequest(&m).State, state)
	}
	m := *mr
	m.State, m.MergeCommitSHA = "merged", "mc"
	assert.Equal(t, "mc", gitlabRequest(&m).MergeCommitSHA)
	m.MergeCommitSHA, m.SquashCommitSHA = "", "sq"
	assert.Equal(t, "sq", gitlabRequest(&m).MergeCommitSHA, "a squash without a merge commit")
}

func TestNewErrors(t *testing.T) {
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	read := func(cs *v1alpha1.CredentialSource) ([]byte, error) {
		switch cs.Env {
		case "TOKEN":
			return []byte(token), nil
		case "EMPTY":
			return []byte(" \n"), nil
		case "KEY":
			return []byte("-----BEGIN RSA PRIVATE KEY-----\nnot a key " + token + "\n-----END RSA PRIVATE KEY-----\n"), nil
		}
		return nil, errors.New("no such variable")
	}
	cfg := func(f v1alpha1.ForgeOptions) *v1alpha1.ClusterSet {
		cs := &v1alpha1.ClusterSet{}
		cs.Spec.Git.URL = "https://github.com/o/r.git"
		cs.Spec.Review = v1alpha1.ReviewOptions{Enabled: true, Forge: f}
		return cs
	}
	tok := &v1alpha1.CredentialSource{Env: "TOKEN"}
	for name, tc := range map[string]struct {
		f    v1alpha1.ForgeOptions
		want string
	}{
		"missing variable": {v1alpha1.ForgeOptions{Provider: "github", Token: &v1alpha1.CredentialSource{Env: "NOPE"}}, "reading token from environment variable NOPE"},
		"empty token":      {v1alpha1.ForgeOptions{Provider: "github", Token: &v1alpha1.CredentialSource{Env: "EMPTY"}}, "token from environment variable EMPTY is empty"},
		"no token":         {v1alpha1.ForgeOptions{Provider: "gitlab"}, "spec.review.forge.token is not set"},
		"gitea no url":     {v1alpha1.ForgeOptions{Provider: "gitea", Token: tok}, "url is required for gitea"},
		"http github":      {v1alpha1.ForgeOptions{Provider: "github", URL: "http://ghe.example", Token: tok}, "https://host"},
		"bad app key": {v1alpha1.ForgeOptions{Provider: "github", GitHubApp: &v1alpha1.GitHubAppAuth{
			AppID: 1, InstallationID: 2, PrivateKey: &v1alpha1.CredentialSource{Env: "KEY"}}}, "privateKey from environment variable KEY is not a PEM RSA private key"},
		"subgroup on github": {v1alpha1.ForgeOptions{Provider: "github", Repository: "a/b/c", Token: tok}, "owner/name"},
		"unknown provider":   {v1alpha1.ForgeOptions{Provider: "bitbucket", Token: tok}, "not github, gitlab or gitea"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(cfg(tc.f), read)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), token)
		})
	}
	c, err := New(cfg(v1alpha1.ForgeOptions{Provider: "gitlab", Token: tok}), read)
	require.NoError(t, err, "GitHub and GitLab clients make no request until used")
	assert.Equal(t, "o/r", c.(*gitlabClient).project)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app, err := New(cfg(v1alpha1.ForgeOptions{Provider: "github", GitHubApp: &v1alpha1.GitHubAppAuth{
		AppID: 1, InstallationID: 2, PrivateKey: &v1alpha1.CredentialSource{Path: "/key"}}}),
		func(*v1alpha1.CredentialSource) ([]byte, error) { return pemKey, nil })
	require.NoError(t, err)
	assert.Equal(t, "o", app.(*githubClient).owner)
}

func TestScrub(t *testing.T) {
	const token = "glpat-0123456789abcdefghij"
	sc := sdkErrors{redact: redact.New(token), credential: "environment variable T"}
	err := sc.wrap("forge: op", http.StatusUnauthorized,
		fmt.Errorf("GET https://oauth2:%s@gitlab.example/api/v4/projects: 401 {message: token %s}", token, token))
	assert.NotContains(t, err.Error(), token)
	assert.Contains(t, err.Error(), "refused the credentials from environment variable T")
	assert.True(t, errors.Is(err, ErrUnauthorized))
	assert.False(t, errors.Is(err, ErrNotFound))
	assert.True(t, errors.Is(sc.wrap("x", http.StatusNotFound, errors.New("404")), ErrNotFound))
	assert.True(t, errors.Is(sc.wrap("x", http.StatusForbidden, errors.New("403")), ErrForbidden))
	assert.False(t, strings.Contains(sc.wrap("x", 0, errors.New("dial: refused")).Error(), "("), "no hint without a status")
}

func TestNewGiteaUnreachable(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef01234567"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	cs := &v1alpha1.ClusterSet{}
	cs.Spec.Git.URL = url + "/o/r.git"
	cs.Spec.Review = v1alpha1.ReviewOptions{Enabled: true, Forge: v1alpha1.ForgeOptions{
		Provider: v1alpha1.ForgeGitea, URL: url, Token: &v1alpha1.CredentialSource{Env: "T"},
	}}
	_, err = New(cs, func(*v1alpha1.CredentialSource) ([]byte, error) { return []byte(token), nil })
	require.Error(t, err, "New asks a Gitea its version")
	assert.Contains(t, err.Error(), "forge: connecting to gitea at "+url)
	assert.NotContains(t, err.Error(), token)
}
