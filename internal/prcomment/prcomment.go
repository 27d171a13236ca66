// SPDX-License-Identifier: Apache-2.0

// Package prcomment keeps one comment of mcs-gitops on a pull request up to
// date, the "sticky" comment a CI job posts its summary in: it finds the
// comment by a marker on its first line and edits it, or creates it. It
// speaks the issue-comments API GitHub and Gitea share
// (repos/{owner}/{repo}/issues/{n}/comments, issues/comments/{id}), and
// must not know anything about what the comment says.
package prcomment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Marker starts every comment this package writes: how the next run finds
// it among the pull request's comments.
const Marker = "<!-- mcs-gitops review -->"

// Client posts to one repository's pull requests.
type Client struct {
	// API is the REST root: https://api.github.com, or a Gitea's
	// https://host/api/v1.
	API string
	// Repo is "owner/name".
	Repo string
	// Token authenticates as a bearer token; it is never logged or put in
	// an error.
	Token string
	HTTP  *http.Client
}

// maxPages bounds the search for an existing comment (100 per page).
const maxPages = 10

// Upsert makes the pull request's mcs-gitops comment say body: it edits
// the comment that starts with Marker, or creates one. It returns the
// comment's ID and whether it was created.
func (c *Client) Upsert(ctx context.Context, pr int, body string) (id int64, created bool, err error) {
	body = Marker + "\n" + body
	for page := 1; page <= maxPages; page++ {
		var comments []struct {
			ID   int64  `json:"id"`
			Body string `json:"body"`
		}
		path := fmt.Sprintf("repos/%s/issues/%d/comments?per_page=100&limit=100&page=%d", c.Repo, pr, page)
		if err := c.do(ctx, http.MethodGet, path, nil, &comments); err != nil {
			return 0, false, err
		}
		for _, cm := range comments {
			if strings.HasPrefix(cm.Body, Marker) {
				err := c.do(ctx, http.MethodPatch, fmt.Sprintf("repos/%s/issues/comments/%d", c.Repo, cm.ID), map[string]string{"body": body}, nil)
				return cm.ID, false, err
			}
		}
		if len(comments) < 100 {
			break
		}
	}
	var made struct {
		ID int64 `json:"id"`
	}
	err = c.do(ctx, http.MethodPost, fmt.Sprintf("repos/%s/issues/%d/comments", c.Repo, pr), map[string]string{"body": body}, &made)
	return made.ID, err == nil, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var r io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.API, "/")+"/"+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(b))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
		}
	}
	return nil
}
