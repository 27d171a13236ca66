// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Produce renders the files to commit on top of the current HEAD: the
// complete content of roots (relative to the repository sub-path) and
// how to write the commit message from what they change.
type Produce func(ctx context.Context) (files map[string][]byte, roots []string, msg Message, err error)

// Publish runs produce, commits and pushes. When the push is rejected
// because the remote moved on, it fetches, hard-resets to the remote
// branch, runs produce again (a re-render from the same snapshot on top
// of the new HEAD), commits and pushes, at most retries more times; then
// it returns an error saying how many attempts were made and why they
// failed. changed reports whether the final attempt committed.
//
// A commit left unpushed by an earlier failure is pushed even when this
// attempt changes nothing. With Options.Verify, HEAD is verified before
// each produce (after Open's fetch and after every reset): when it does
// not verify, Publish returns the *VerifyError and nothing is rendered,
// committed or pushed.
func Publish(ctx context.Context, r *Repo, retries int, produce Produce) (plumbing.Hash, bool, error) {
	if retries < 0 {
		retries = 0
	}
	var last error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return plumbing.ZeroHash, false, err
			}
			if err := r.ResetToRemote(ctx); err != nil {
				return plumbing.ZeroHash, false, fmt.Errorf("after a rejected push: %w", err)
			}
		}
		// HEAD is what Open or ResetToRemote fetched, maybe someone
		// else's commit: nothing is rendered or committed on top of it
		// unless it verifies.
		head, err := r.Head()
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if err := r.Verify(head); err != nil {
			return plumbing.ZeroHash, false, err
		}
		files, roots, msg, err := produce(ctx)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		hash, changed, err := r.Commit(files, roots, msg)
		if err != nil {
			return hash, false, err
		}
		err = r.Push(ctx)
		if err == nil {
			return hash, changed, nil
		}
		if !errors.Is(err, ErrPushRejected) {
			return hash, changed, err
		}
		last = err
		r.opts.Log.Info("git push rejected; fetching and rendering again", "attempt", attempt+1, "of", retries+1)
	}
	return plumbing.ZeroHash, false, fmt.Errorf("gave up after %d push attempts, each rejected because the remote branch kept moving: %w", retries+1, last)
}

// backoff grows with the attempt: 50ms, 100ms, 200ms ... capped at 2s.
func backoff(attempt int) time.Duration {
	d := 50 * time.Millisecond << (attempt - 1)
	if d > 2*time.Second || d <= 0 {
		d = 2 * time.Second
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
