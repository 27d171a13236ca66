// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"context"
	"errors"
)

// Client opens and tracks requests on one repository of one forge. Its
// methods are safe for concurrent use.
type Client interface {
	// Find returns the newest request whose head is branch of this
	// repository (not a fork), open, merged or closed; nil when there is
	// none.
	Find(ctx context.Context, branch string) (*Request, error)
	// Open opens a request from c.Branch into c.Base with c's title, body
	// and labels, creating labels the repository lacks. On GitHub the
	// labels are set after the request is opened; if that fails, the
	// error says the request was opened, and Find returns it.
	Open(ctx context.Context, c Change) (*Request, error)
	// Update sets the title (when c.Title is not empty), the body, and
	// the labels (exactly c.Labels, created where missing, when c.Labels
	// is not nil) of request number. c.Branch and c.Base are not used.
	Update(ctx context.Context, number int, c Change) (*Request, error)
	// Close comments (when comment is not empty) and closes request
	// number unmerged. A request that is no longer open is left alone.
	Close(ctx context.Context, number int, comment string) error
	// Get reads request number; ErrNotFound when there is none.
	Get(ctx context.Context, number int) (*Request, error)
}

// labelColor is the color of labels the clients create; GitHub and Gitea
// require one.
const labelColor = "ededed"

// Change is what a request should say.
type Change struct {
	// Branch is the head branch (the proposal), Base the branch it goes
	// into.
	Branch, Base string
	Title, Body  string
	// Labels are label names.
	Labels []string
}

// State is where a request stands.
type State string

const (
	// Open: waiting for review.
	Open State = "Open"
	// Merged: approved.
	Merged State = "Merged"
	// Closed: closed without a merge, rejected.
	Closed State = "Closed"
)

// Request is a pull or merge request as the forge reports it.
type Request struct {
	// Number is the pull request number (GitLab: the merge request IID).
	Number int
	// URL is the request's web page.
	URL   string
	State State
	// Branch is the head (source) branch, Base the target.
	Branch, Base string
	// HeadSHA is the head branch's commit the request is at.
	HeadSHA string
	// MergeCommitSHA is the commit the merge made on Base (a squash
	// commit on GitLab when squashed); empty unless State is Merged.
	MergeCommitSHA string
	Title, Body    string
	// Labels are label names, sorted.
	Labels []string
}

var (
	// ErrNotFound: the request, or the repository, does not exist (or
	// the credentials may not see it).
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: the forge refused the credentials.
	ErrUnauthorized = errors.New("credentials refused")
	// ErrForbidden: the credentials lack a permission the call needs.
	ErrForbidden = errors.New("permission denied")
)
