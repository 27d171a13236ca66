// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// Signature names the author (who is also the committer) of the commits.
type Signature struct {
	Name, Email string
}

// Options say which repository, branch and sub-path Open works on.
type Options struct {
	// URL is a local non-bare repository (used in place), or a bare
	// repository path, file://, https://, ssh:// or user@host:path URL
	// (cloned into Workdir).
	URL string
	// Branch to commit to and push; default "main".
	Branch string
	// Path inside the repository that holds clusterset.yaml, inputs/,
	// clusters/ and status/; "" is the repository root.
	Path string
	// Workdir is where a remote URL is cloned (or an earlier clone reused).
	// Unused for a local non-bare repository.
	Workdir string
	// Auth for fetch and push; nil for none (local paths, file://).
	Auth transport.AuthMethod
	// Author of the commits, also their committer; default
	// mcs-gitops <mcs-gitops@localhost>.
	Author Signature
	// Clock gives the commit time; default time.Now.
	Clock func() time.Time
	// Log receives progress lines; default slog.Default().
	Log *slog.Logger
	// Signer, when set, signs every commit Commit makes (gpgsig header).
	Signer Signer
	// Verify, when set, is what Verify checks a commit with; Publish
	// verifies HEAD with it before each render on top.
	Verify *Verifier
	// Fence, when set, is asked right before every push and remote
	// branch deletion; an error refuses the write and is returned as is.
	// A leader that may have lost its Lease uses it so it never writes
	// over the new leader.
	Fence func() error
}

// Repo is an opened rendered repository. It is not safe for concurrent use.
type Repo struct {
	opts   Options
	repo   *git.Repository
	wt     *git.Worktree
	root   string                 // worktree root on disk
	branch plumbing.ReferenceName // refs/heads/<Branch>
	// remote is true when "origin" exists: Push and ResetToRemote act on it.
	remote bool
	// redact removes the repository's secrets (tokens, URL passwords)
	// from every error and log line that may quote a transport message.
	redact redact.Redactor
	// cache holds the blob hashes of the HEAD tree under the roots last
	// asked for, so the steady state does not re-read the tree.
	cache headCache
	// committed are the files the last Commit committed or found in HEAD.
	committed committedFiles
	// expected is what the caller said the next Commit changes.
	expected *expectation
	// indexCache is the index stage last wrote, unstaged what commits
	// changed since (index.go).
	indexCache indexCache
	unstaged   unstaged
	// mirrored is the commit whose files the worktree is known to hold
	// under the roots of mirroredRoots, because Commit wrote them: the next
	// Commit on top of it writes only what it changes. Zero after Open and
	// ResetToRemote, when the worktree is whatever a checkout left there
	// (links included), so the next Commit writes the whole tree.
	mirrored      plumbing.Hash
	mirroredRoots []string
	// line is the newest commit on the remote branch this Repo accepted:
	// what Open cloned, what it pushed, what it reset to and verified. The
	// remote branch must descend from it (ResetToRemote); zero before any.
	line plumbing.Hash
}

const remoteName = "origin"

func (o *Options) setDefaults() error {
	if o.URL == "" {
		return fmt.Errorf("git URL is empty")
	}
	if o.Branch == "" {
		o.Branch = "main"
	}
	if !plumbing.NewBranchReferenceName(o.Branch).IsBranch() || strings.ContainsAny(o.Branch, " ~^:?*[\\") {
		return fmt.Errorf("branch %q is not a valid branch name", o.Branch)
	}
	p, err := cleanSubPath(o.Path)
	if err != nil {
		return err
	}
	o.Path = p
	if o.Author.Name == "" {
		o.Author.Name = "mcs-gitops"
	}
	if o.Author.Email == "" {
		o.Author.Email = "mcs-gitops@localhost"
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return nil
}

// cleanSubPath makes Path slash-separated and relative, "" for the root,
// and refuses paths that leave the repository.
func cleanSubPath(p string) (string, error) {
	p = strings.ReplaceAll(p, "\\", "/")
	c := path.Clean("/" + p)
	if strings.HasPrefix(p, "/") || strings.Contains("/"+p+"/", "/../") {
		return "", fmt.Errorf("git path %q must be relative and stay inside the repository", p)
	}
	if c == "/" {
		return "", nil
	}
	if c == "/.git" || strings.HasPrefix(c, "/.git/") {
		return "", fmt.Errorf("git path %q points into .git", p)
	}
	return strings.TrimPrefix(c, "/"), nil
}

// repoPath turns a path relative to Options.Path into one relative to the
// repository root.
func (r *Repo) repoPath(p string) string {
	switch {
	case r.opts.Path == "":
		return p
	case p == "":
		return r.opts.Path
	}
	return r.opts.Path + "/" + p
}

// Name is the repository URL (credentials redacted), the branch and the
// sub-path: which rendered tree this Repo writes.
func (r *Repo) Name() (url, branch, path string) {
	return r.redact.String(r.opts.URL), r.opts.Branch, r.opts.Path
}
