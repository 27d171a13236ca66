// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// ErrPushRejected is returned (wrapped) by Push when the remote branch
// moved on and the push is not a fast-forward: fetch, reset, re-render
// and commit again (Publish does).
var ErrPushRejected = errors.New("push rejected: the remote branch has commits this clone lacks")

// Push sends Branch to origin. A repository without origin (used in
// place) has nothing to push to and returns nil, as does an empty branch.
func (r *Repo) Push(ctx context.Context) error {
	if !r.remote {
		return nil
	}
	head, err := r.Head()
	if err != nil || head.IsZero() {
		return err
	}
	if tracked, err := r.repo.Storer.Reference(r.trackingRef()); err == nil && tracked.Hash() == head {
		return nil // the remote had this commit when last seen
	}
	if err := r.fenced(); err != nil {
		return err
	}
	handled, err := r.pushOnto(ctx, head)
	if !handled {
		spec := config.RefSpec(r.branch.String() + ":" + r.branch.String())
		err = r.repo.PushContext(ctx, &git.PushOptions{
			RemoteName: remoteName,
			RefSpecs:   []config.RefSpec{spec},
			Auth:       r.opts.Auth,
		})
	}
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
	case isRejected(err):
		return fmt.Errorf("pushing %s to %s: %w (%s)", r.opts.Branch, r.redact.String(r.opts.URL), ErrPushRejected, r.redact.String(err.Error()))
	default:
		return r.redact.Error(fmt.Errorf("pushing %s to %s: %w", r.opts.Branch, r.redact.String(r.opts.URL), err))
	}
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(r.trackingRef(), head)); err != nil {
		return fmt.Errorf("recording the pushed commit: %w", err)
	}
	r.line = head
	r.opts.Log.Info("git push", "commit", head.String()[:12], "branch", r.opts.Branch, "url", r.redact.String(r.opts.URL))
	return nil
}

// fenced is Options.Fence's answer; nil without one.
func (r *Repo) fenced() error {
	if r.opts.Fence == nil {
		return nil
	}
	return r.opts.Fence()
}

// isRejected recognizes a non-fast-forward rejection. go-git reports it
// as a plain error (not git.ErrNonFastForwardUpdate) when it checks
// locally, and the server's report status when the branch moved between
// the advertisement and the update.
func isRejected(err error) bool {
	if errors.Is(err, git.ErrNonFastForwardUpdate) || errors.Is(err, git.ErrForceNeeded) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref", "stale info", "[rejected]"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func (r *Repo) trackingRef() plumbing.ReferenceName {
	return plumbing.NewRemoteReferenceName(remoteName, r.opts.Branch)
}

// ResetToRemote fetches Branch from origin and hard-resets the worktree
// and Branch to it, discarding local commits that were not pushed. When
// origin has no Branch (or there is no origin) nothing changes, and the
// next Push creates it again from HEAD (a remote recreated empty). A
// remote branch that does not descend from the last commit this Repo saw
// there was rewritten (a force-push): it is refused with a
// *RewrittenError and the clone stays as it was.
func (r *Repo) ResetToRemote(ctx context.Context) error {
	if !r.remote {
		return nil
	}
	remote, ok, err := r.fetch(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return r.branchGone()
	}
	head, err := r.Head()
	if err != nil {
		return err
	}
	if err := r.checkLine(remote); err != nil {
		return err
	}
	// The line moves only to a commit the loop accepts: an edit that
	// spec.git.verify refuses is on the branch, but a person resetting the
	// branch back to the last signed commit is a repair, not a rewrite.
	if r.Verify(remote) == nil {
		r.line = remote
	}
	if head == remote {
		return nil
	}
	if head.IsZero() {
		// go-git's reset needs a HEAD commit to start from.
		if err := r.repo.Storer.SetReference(plumbing.NewHashReference(r.branch, remote)); err != nil {
			return err
		}
	}
	r.mirrored = plumbing.ZeroHash
	// go-git's reset starts from the index: one that describes HEAD keeps
	// it from rehashing every file.
	if err := r.SyncIndex(); err != nil {
		return err
	}
	if err := r.wt.Reset(&git.ResetOptions{Commit: remote, Mode: git.HardReset}); err != nil {
		return fmt.Errorf("resetting %s to %s/%s (%s): %w", r.root, remoteName, r.opts.Branch, remote, err)
	}
	r.opts.Log.Info("git reset to remote", "commit", remote.String()[:12], "branch", r.opts.Branch)
	return nil
}

// fetch updates origin/Branch and returns its commit; ok is false when
// the remote is empty or lacks Branch.
func (r *Repo) fetch(ctx context.Context) (plumbing.Hash, bool, error) {
	return r.fetchRef(ctx, r.branch, r.trackingRef())
}

// fetchRef updates tracking from origin's branch and returns its commit;
// ok is false when origin lacks it.
func (r *Repo) fetchRef(ctx context.Context, branch, tracking plumbing.ReferenceName) (plumbing.Hash, bool, error) {
	spec := config.RefSpec("+" + branch.String() + ":" + tracking.String())
	err := r.repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: remoteName,
		RefSpecs:   []config.RefSpec{spec},
		Auth:       r.opts.Auth,
		Tags:       git.NoTags,
		Force:      true,
	})
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
	case errors.Is(err, transport.ErrEmptyRemoteRepository), errors.As(err, new(git.NoMatchingRefSpecError)):
		return plumbing.ZeroHash, false, nil
	default:
		return plumbing.ZeroHash, false, r.redact.Error(fmt.Errorf("fetching %s from %s: %w", branch.Short(), r.redact.String(r.opts.URL), err))
	}
	ref, err := r.repo.Storer.Reference(tracking)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	return ref.Hash(), true, nil
}
