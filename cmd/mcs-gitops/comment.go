// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/prcomment"
)

func newCommentCommand() *cobra.Command {
	var body string
	var pr int
	cmd := &cobra.Command{
		Use:   "comment",
		Short: "Post or update mcs-gitops's one comment on a pull request (a CI job's sticky summary)",
		Long: `Comment makes the pull request's mcs-gitops comment say what --body-file holds:
it edits the comment a previous run posted (found by a marker on its first
line) or creates one, so a pull request has one summary that follows its
latest push rather than one per push. Write the body with diff's --comment,
which keeps it under the 65,536-character limit of a comment.

It reads what a GitHub Actions job has: GITHUB_API_URL, GITHUB_REPOSITORY
(owner/name), GITHUB_TOKEN (needs pull-requests: write, or issues: write)
and the pull request's number from --pr or the event in GITHUB_EVENT_PATH.
Gitea serves the same API: GITHUB_API_URL=https://gitea.example/api/v1. The
token is never printed.

Exit codes: 0 posted; 2 missing or bad input; 3 the API refused.`,
		Example: `  mcs-gitops diff --base origin/main --comment "$RUNNER_TEMP/comment.md" || rc=$?
  mcs-gitops comment --body-file "$RUNNER_TEMP/comment.md"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			text, err := os.ReadFile(body)
			if err != nil {
				return &exitError{2, fmt.Errorf("--body-file: %w", err)}
			}
			c := &prcomment.Client{API: os.Getenv("GITHUB_API_URL"), Repo: os.Getenv("GITHUB_REPOSITORY"), Token: os.Getenv("GITHUB_TOKEN")}
			switch {
			case c.API == "":
				return &exitError{2, errors.New("GITHUB_API_URL is not set (the API root: GitHub's, or a Gitea's .../api/v1)")}
			case c.Repo == "":
				return &exitError{2, errors.New("GITHUB_REPOSITORY is not set (owner/name)")}
			case c.Token == "":
				return &exitError{2, errors.New("GITHUB_TOKEN is not set")}
			}
			if pr == 0 {
				if pr, err = eventPR(os.Getenv("GITHUB_EVENT_PATH")); err != nil {
					return &exitError{2, err}
				}
			}
			id, created, err := c.Upsert(cmd.Context(), pr, string(text))
			if err != nil {
				return &exitError{3, fmt.Errorf("pull request %d of %s: %w", pr, c.Repo, err)}
			}
			verb := "updated"
			if created {
				verb = "posted"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s comment %s on pull request %d of %s\n", verb, strconv.FormatInt(id, 10), pr, c.Repo)
			return nil
		},
	}
	cmd.Flags().StringVar(&body, "body-file", "", "the comment's Markdown (diff --comment writes it)")
	cmd.Flags().IntVar(&pr, "pr", 0, "the pull request's number (default: the one of the event in GITHUB_EVENT_PATH)")
	_ = cmd.MarkFlagRequired("body-file")
	return cmd
}

// eventPR reads the pull request's number from a GitHub Actions event.
func eventPR(path string) (int, error) {
	if path == "" {
		return 0, errors.New("no --pr, and GITHUB_EVENT_PATH is not set")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
	}
	var ev struct {
		Number      int `json:"number"`
		PullRequest struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if ev.PullRequest.Number > 0 {
		return ev.PullRequest.Number, nil
	}
	if ev.Number > 0 {
		return ev.Number, nil
	}
	return 0, fmt.Errorf("%s: no pull request in the event (run on pull_request, or pass --pr)", path)
}
