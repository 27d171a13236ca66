// SPDX-License-Identifier: Apache-2.0

package gitea

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// User is a second Gitea account, for acting as a person would: approving
// by merging, closing a request.
type User struct {
	Name string
	// Token is an API token of the user with write:repository,
	// write:issue and write:user.
	Token string
}

// API sends one request to Gitea's API as the holder of token ("" means
// anonymous): method, a path under /api/v1/ ("repos/lab/r/pulls"), in
// encoded as JSON when not nil. It decodes a 2xx answer into out when out
// is not nil and returns the status code and the raw body. It fails t only
// when Gitea cannot be reached; the status is the caller's to judge.
func (s *Server) API(t testing.TB, token, method, path string, in, out any) (int, []byte) {
	t.Helper()
	code, body, err := s.api(token, "", "", method, path, in, out)
	if err != nil {
		t.Fatalf("gitea API %s %s: %v", method, path, err)
	}
	return code, body
}

func (s *Server) api(token, user, password, method, path string, in, out any) (int, []byte, error) {
	var r io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+"api/v1/"+strings.TrimPrefix(path, "/"), r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case token != "":
		req.Header.Set("Authorization", "token "+token)
	case user != "":
		req.SetBasicAuth(user, password)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, body, fmt.Errorf("decoding the answer: %w", err)
		}
	}
	return resp.StatusCode, body, nil
}

// must sends a request that has to succeed with one of the given codes.
func (s *Server) must(t testing.TB, token, method, path string, in, out any, want ...int) {
	t.Helper()
	code, body := s.API(t, token, method, path, in, out)
	for _, w := range want {
		if code == w {
			return
		}
	}
	t.Fatalf("gitea API %s %s: %d %s", method, path, code, truncate(body))
}

// createToken makes an API token for user by basic auth with password.
func (s *Server) createToken(user, password, name string, scopes ...string) (string, error) {
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	code, body, err := s.api("", user, password, http.MethodPost, "users/"+user+"/tokens",
		map[string]any{"name": name, "scopes": scopes}, &tok)
	if err != nil {
		return "", err
	}
	if code != http.StatusCreated || tok.SHA1 == "" {
		return "", fmt.Errorf("POST users/%s/tokens: %d %s", user, code, truncate(body))
	}
	return tok.SHA1, nil
}

// AdminToken makes another API token of the admin with exactly scopes
// (e.g. "write:repository", "write:issue"), to prove what a client needs.
func (s *Server) AdminToken(t testing.TB, scopes ...string) string {
	t.Helper()
	name, err := randomHex(4)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.createToken(AdminName, s.password, "scoped-"+name, scopes...)
	if err != nil {
		t.Fatalf("gitea: admin token with scopes %v: %v", scopes, err)
	}
	return tok
}

// CreateRepo creates the public repository AdminName/name with an initial
// commit (a README on main) and returns its HTTP clone URL. Push to it
// with any user name and a token as the password.
func (s *Server) CreateRepo(t testing.TB, name string) (cloneURL string) {
	t.Helper()
	var repo struct {
		CloneURL string `json:"clone_url"`
	}
	s.must(t, s.Token, http.MethodPost, "user/repos", map[string]any{
		"name": name, "auto_init": true, "default_branch": "main", "readme": "Default", "private": false,
	}, &repo, http.StatusCreated)
	return repo.CloneURL
}

// User creates a (non-admin) user with an API token.
func (s *Server) User(t testing.TB, name string) *User {
	t.Helper()
	pw, err := randomHex(16)
	if err != nil {
		t.Fatal(err)
	}
	s.must(t, s.Token, http.MethodPost, "admin/users", map[string]any{
		"username": name, "email": name + "@example.com", "password": pw, "must_change_password": false,
	}, nil, http.StatusCreated)
	tok, err := s.createToken(name, pw, "t", "write:repository", "write:issue", "write:user")
	if err != nil {
		t.Fatalf("gitea: token of user %s: %v", name, err)
	}
	return &User{Name: name, Token: tok}
}

// Collaborator gives user write access to AdminName/repo.
func (s *Server) Collaborator(t testing.TB, repo, user string) {
	t.Helper()
	s.must(t, s.Token, http.MethodPut, "repos/"+AdminName+"/"+repo+"/collaborators/"+user,
		map[string]any{"permission": "write"}, nil, http.StatusNoContent)
}

// Merge merges pull request number of AdminName/repo with a merge commit,
// as the holder of token, the way a reviewer approving it would. Gitea
// checks a new pull request's mergeability in the background and refuses
// a merge until it has, so a refusal saying so is retried for a while.
func (s *Server) Merge(t testing.TB, token, repo string, number int) {
	t.Helper()
	path := fmt.Sprintf("repos/%s/%s/pulls/%d/merge", AdminName, repo, number)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := s.API(t, token, http.MethodPost, path, map[string]any{"Do": "merge"}, nil)
		if code == http.StatusOK {
			return
		}
		if (code == http.StatusMethodNotAllowed || code == http.StatusConflict) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		t.Fatalf("gitea: merging %s#%d: %d %s", repo, number, code, truncate(body))
	}
}

// OpenPull opens a pull request of branch head into base of
// AdminName/repo, as the admin, and returns its number.
func (s *Server) OpenPull(t testing.TB, repo, head, base, title string) int {
	t.Helper()
	var opened struct {
		Number int `json:"number"`
	}
	s.must(t, s.Token, http.MethodPost, fmt.Sprintf("repos/%s/%s/pulls", AdminName, repo),
		map[string]any{"head": head, "base": base, "title": title}, &opened, http.StatusCreated)
	return opened.Number
}

// ClosePull closes pull request number of AdminName/repo unmerged, as the
// holder of token.
func (s *Server) ClosePull(t testing.TB, token, repo string, number int) {
	t.Helper()
	s.must(t, token, http.MethodPatch, fmt.Sprintf("repos/%s/%s/pulls/%d", AdminName, repo, number),
		map[string]any{"state": "closed"}, nil, http.StatusCreated, http.StatusOK)
}

// truncate keeps failure messages short; Gitea's error bodies name the
// problem, not a credential.
func truncate(b []byte) string {
	const max = 500
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
