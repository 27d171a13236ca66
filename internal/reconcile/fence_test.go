// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// writes stands for the Lease in the apiserver: this test is of the fence's
// arithmetic; TestLeaderElectionOneCommitter (test/e2e) runs the elector
// on a real Lease.
type writes struct {
	resourcelock.Interface
	fail error
}

func (w *writes) Create(context.Context, resourcelock.LeaderElectionRecord) error { return w.fail }
func (w *writes) Update(context.Context, resourcelock.LeaderElectionRecord) error { return w.fail }
func (w *writes) Identity() string                                                { return "me" }

// A leader may write while its last renewal is younger than the renew
// deadline, timed from before the renewal was sent; a paused leader that
// resumes past it, one whose renewals fail, and one that only released
// the Lease may not.
func TestFence(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	held := &renewals{valid: 10 * time.Second, now: func() time.Time { return now }}
	w := &writes{}
	lock := renewingLock{Interface: w, r: held}
	ctx := context.Background()

	assert.ErrorIs(t, held.check(), ErrFenced, "before the Lease is first acquired")
	assert.NoError(t, lock.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}))
	assert.NoError(t, held.check(), "just acquired")

	now = now.Add(9 * time.Second)
	assert.NoError(t, held.check(), "within the renew deadline")
	now = now.Add(time.Second)
	err := held.check()
	assert.ErrorIs(t, err, ErrFenced, "a leader paused past the renew deadline may not write")
	assert.ErrorContains(t, err, "last renewed 10s ago")

	assert.NoError(t, lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}))
	assert.NoError(t, held.check(), "renewed")

	now = now.Add(11 * time.Second)
	w.fail = errors.New("409 Conflict")
	assert.Error(t, lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}))
	assert.ErrorIs(t, held.check(), ErrFenced, "a failed renewal proves nothing")

	w.fail = nil
	assert.NoError(t, lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: ""}))
	assert.ErrorIs(t, held.check(), ErrFenced, "releasing the Lease is not holding it")
}
