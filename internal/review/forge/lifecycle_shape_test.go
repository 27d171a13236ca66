// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v87/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The life of a proposal (open, update, close) on GitHub and GitLab, as
// the requests each client sends: the endpoints, methods and fields of
// the forges' REST API documentation. Gitea's is proven on a real server
// (gitea_test.go); for the other two there is none here, so these pin
// the wire shape. The handler only answers what the documented endpoint
// would; it decides nothing.

// call is one request the client sent: "METHOD path" and its JSON body.
type call struct {
	Route string
	Body  map[string]any
}

// wire records requests and answers each route with a canned body and
// status; a route without an answer is a test failure (404), so a call
// to an endpoint the API does not have cannot pass unnoticed.
type wire struct {
	t       *testing.T
	mu      sync.Mutex
	calls   []call
	answers map[string]answer
}

type answer struct {
	status int
	body   string
}

func newWire(t *testing.T, answers map[string]answer) (*wire, *httptest.Server) {
	w := &wire{t: t, answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(srv.Close)
	return w, srv
}

func (w *wire) serve(rw http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.EscapedPath()
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		assert.NoError(w.t, json.Unmarshal(raw, &body), route)
	} else if len(raw) > 0 {
		// A bare JSON array (GitHub's labels): keep it under "".
		var v any
		assert.NoError(w.t, json.Unmarshal(raw, &v), route)
		body = map[string]any{"": v}
	}
	w.mu.Lock()
	w.calls = append(w.calls, call{Route: route, Body: body})
	a, ok := w.answers[route]
	w.mu.Unlock()
	if !ok {
		w.t.Errorf("unexpected request %s %s", route, raw)
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	if a.status != 0 {
		rw.WriteHeader(a.status)
	}
	io.WriteString(rw, a.body)
}

// take returns the calls since the last take.
func (w *wire) take() []call {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls
	w.calls = nil
	return c
}

func routes(calls []call) []string {
	var r []string
	for _, c := range calls {
		r = append(r, c.Route)
	}
	return r
}

func TestGitHubProposalLifecycleRequests(t *testing.T) {
	const pr = `{"number": 7, "state": "open", "html_url": "https://github.example/o/r/pull/7", "title": "t",
 "head": {"ref": "mcs-gitops/proposals/service/demo/web", "sha": "h", "repo": {"full_name": "o/r"}}, "base": {"ref": "main"}}`
	w, srv := newWire(t, map[string]answer{
		"POST /api/v3/repos/o/r/pulls":                 {status: http.StatusCreated, body: pr},
		"GET /api/v3/repos/o/r/labels/mcs-gitops":      {body: `{"name": "mcs-gitops"}`},
		"GET /api/v3/repos/o/r/labels/review%2FExport": {status: http.StatusNotFound, body: `{"message": "Not Found"}`},
		"POST /api/v3/repos/o/r/labels":                {status: http.StatusCreated, body: `{"name": "review/Export"}`},
		"PUT /api/v3/repos/o/r/issues/7/labels":        {body: `[{"name": "mcs-gitops"}, {"name": "review/Export"}]`},
		"PATCH /api/v3/repos/o/r/pulls/7":              {body: pr},
		"GET /api/v3/repos/o/r/pulls/7":                {body: pr},
		"POST /api/v3/repos/o/r/issues/7/comments":     {status: http.StatusCreated, body: `{"id": 1}`},
		"GET /api/v3/repos/o/r/pulls/8":                {body: `{"number": 8, "state": "closed", "merged": true, "merge_commit_sha": "m"}`},
		"PATCH /api/v3/repos/o/r/pulls/9":              {status: http.StatusForbidden, body: `{"message": "Resource not accessible by integration"}`},
		"GET /api/v3/repos/o/r/pulls/9":                {body: `{"number": 9, "state": "open"}`},
		"POST /api/v3/repos/o/r/issues/9/comments":     {status: http.StatusCreated, body: `{"id": 2}`},
	})
	c, err := github.NewClient(github.WithEnterpriseURLs(srv.URL+"/api/v3/", srv.URL+"/api/uploads/"))
	require.NoError(t, err)
	g := &githubClient{c: c, owner: "o", name: "r"}
	ctx := context.Background()
	change := Change{Branch: "mcs-gitops/proposals/service/demo/web", Base: "main", Title: "t", Body: "b", Labels: []string{"mcs-gitops", "review/Export"}}

	r, err := g.Open(ctx, change)
	require.NoError(t, err)
	assert.Equal(t, 7, r.Number)
	assert.Equal(t, []string{"mcs-gitops", "review/Export"}, r.Labels, "the labels the forge set, not the ones asked for")
	calls := w.take()
	assert.Equal(t, []string{
		"POST /api/v3/repos/o/r/pulls",
		"GET /api/v3/repos/o/r/labels/mcs-gitops",
		"GET /api/v3/repos/o/r/labels/review%2FExport",
		"POST /api/v3/repos/o/r/labels",
		"PUT /api/v3/repos/o/r/issues/7/labels",
	}, routes(calls), "open, then make the missing label, then set them all")
	assert.Equal(t, map[string]any{"title": "t", "head": change.Branch, "base": "main", "body": "b"}, calls[0].Body)
	assert.Equal(t, map[string]any{"name": "review/Export", "color": labelColor}, calls[3].Body)
	assert.Equal(t, map[string]any{"": []any{"mcs-gitops", "review/Export"}}, calls[4].Body, "labels replace, not add")

	// An update without labels leaves them alone; a title is sent only
	// when there is one.
	_, err = g.Update(ctx, 7, Change{Body: "b2"})
	require.NoError(t, err)
	calls = w.take()
	assert.Equal(t, []string{"PATCH /api/v3/repos/o/r/pulls/7"}, routes(calls))
	assert.Equal(t, map[string]any{"body": "b2"}, calls[0].Body)

	require.NoError(t, g.Close(ctx, 7, "withdrawn: the export is gone"))
	calls = w.take()
	assert.Equal(t, []string{
		"GET /api/v3/repos/o/r/pulls/7",
		"POST /api/v3/repos/o/r/issues/7/comments",
		"PATCH /api/v3/repos/o/r/pulls/7",
	}, routes(calls), "comment, then close")
	assert.Equal(t, map[string]any{"body": "withdrawn: the export is gone"}, calls[1].Body)
	assert.Equal(t, map[string]any{"state": "closed"}, calls[2].Body)

	// A merged request is never closed, nor commented on.
	require.NoError(t, g.Close(ctx, 8, "withdrawn"))
	assert.Equal(t, []string{"GET /api/v3/repos/o/r/pulls/8"}, routes(w.take()))

	// A refused close is ErrForbidden and names the request.
	err = g.Close(ctx, 9, "withdrawn")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrForbidden)
	assert.Contains(t, err.Error(), "closing pull request o/r#9")
}

func TestGitLabProposalLifecycleRequests(t *testing.T) {
	const token = "glpat-0123456789abcdefghij"
	const mr = `{"iid": 3, "state": "opened", "web_url": "https://gitlab.corp.example/g/r/-/merge_requests/3",
 "source_branch": "mcs-gitops/proposals/service/demo/web", "target_branch": "main", "sha": "h",
 "labels": ["mcs-gitops", "review/Export"]}`
	const base = "/api/v4/projects/g%2Fr/merge_requests"
	w, srv := newWire(t, map[string]answer{
		"POST " + base:              {status: http.StatusCreated, body: mr},
		"PUT " + base + "/3":        {body: mr},
		"GET " + base + "/3":        {body: mr},
		"POST " + base + "/3/notes": {status: http.StatusCreated, body: `{"id": 1}`},
		"GET " + base + "/4":        {body: `{"iid": 4, "state": "merged", "merge_commit_sha": "", "squash_commit_sha": "s"}`},
		"GET " + base + "/5":        {status: http.StatusNotFound, body: `{"message": "404 Not found"}`},
	})
	g := gitlabAt(t, srv.URL, "https://gitlab.corp.example/g/r.git", token)
	ctx := context.Background()
	change := Change{Branch: "mcs-gitops/proposals/service/demo/web", Base: "main", Title: "t", Body: "b", Labels: []string{"mcs-gitops", "review/Export"}}

	r, err := g.Open(ctx, change)
	require.NoError(t, err)
	assert.Equal(t, 3, r.Number)
	assert.Equal(t, Open, r.State)
	calls := w.take()
	require.Equal(t, []string{"POST " + base}, routes(calls), "GitLab makes the labels a request names: one call")
	assert.Equal(t, map[string]any{
		"title": "t", "description": "b", "source_branch": change.Branch, "target_branch": "main",
		"labels": "mcs-gitops,review/Export",
	}, calls[0].Body)

	_, err = g.Update(ctx, 3, Change{Title: "t2", Body: "b2", Labels: []string{"mcs-gitops"}})
	require.NoError(t, err)
	calls = w.take()
	require.Equal(t, []string{"PUT " + base + "/3"}, routes(calls))
	assert.Equal(t, map[string]any{"title": "t2", "description": "b2", "labels": "mcs-gitops"}, calls[0].Body)

	require.NoError(t, g.Close(ctx, 3, "withdrawn"))
	calls = w.take()
	require.Equal(t, []string{"GET " + base + "/3", "POST " + base + "/3/notes", "PUT " + base + "/3"}, routes(calls))
	assert.Equal(t, map[string]any{"body": "withdrawn"}, calls[1].Body)
	assert.Equal(t, map[string]any{"state_event": "close"}, calls[2].Body)

	// A squash merge without a merge commit reports the squash commit.
	r, err = g.Get(ctx, 4)
	require.NoError(t, err)
	assert.Equal(t, Merged, r.State)
	assert.Equal(t, "s", r.MergeCommitSHA)
	require.NoError(t, g.Close(ctx, 4, "withdrawn"))
	w.take()

	_, err = g.Get(ctx, 5)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "merge request g/r!5")
	assert.NotContains(t, err.Error(), token)
	for _, c := range w.take() {
		assert.False(t, strings.HasPrefix(c.Route, "PUT") || strings.HasPrefix(c.Route, "POST"), "a read writes nothing: %s", c.Route)
	}
}
