// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Fence says whether this process may still write: push to the branch
// (gitsync.Options.Fence) and apply to members (Loop.Fence). It returns
// nil when it may, else an error wrapping ErrFenced.
type Fence func() error

// ErrFenced is why a leader that may have lost its Lease writes nothing.
var ErrFenced = errors.New("this process may no longer hold the leader Lease")

// renewals is a leader's proof that it holds the Lease: when it last
// wrote the Lease as its holder. client-go's elector steps down when it
// has not renewed for RenewDeadline, but only when its goroutine gets to
// run: a process paused past its Lease (SIGSTOP, a stalled node, a long
// GC) resumes believing it leads, and went on pushing and applying for up
// to RenewDeadline over the new leader's commits. So every write asks
// first, and the answer comes from the clock, not from the elector.
//
// A write is allowed while the last renewal is younger than RenewDeadline.
// Another replica takes the Lease only after LeaseDuration without a
// renewal, so a write that starts in time has at least
// LeaseDuration - RenewDeadline (5 s with the defaults) to finish before
// anyone else may write. The renewal is timed from before its request was
// sent, which errs on the safe side.
type renewals struct {
	mu    sync.Mutex
	last  time.Time // monotonic reading; zero: never renewed
	valid time.Duration
	now   func() time.Time
}

func (r *renewals) renewed(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at.After(r.last) {
		r.last = at
	}
}

// check is the Fence.
func (r *renewals) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last.IsZero() {
		return fmt.Errorf("%w: it never renewed it", ErrFenced)
	}
	if age := r.now().Sub(r.last); age >= r.valid {
		return fmt.Errorf("%w: last renewed %s ago, longer than the renew deadline %s", ErrFenced, age.Round(time.Millisecond), r.valid)
	}
	return nil
}

// renewingLock is the Lease lock that records each write naming this
// process as the holder: an acquisition or a renewal, never the release.
type renewingLock struct {
	resourcelock.Interface
	r *renewals
}

func (l renewingLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	at := l.r.now()
	return l.wrote(at, ler, l.Interface.Create(ctx, ler))
}

func (l renewingLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	at := l.r.now()
	return l.wrote(at, ler, l.Interface.Update(ctx, ler))
}

// wrote records a write sent at at that named this process the holder and
// succeeded; it returns the write's error.
func (l renewingLock) wrote(at time.Time, ler resourcelock.LeaderElectionRecord, err error) error {
	if err == nil && ler.HolderIdentity == l.Identity() {
		l.r.renewed(at)
	}
	return err
}
