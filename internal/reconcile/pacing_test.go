// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
)

func TestPacerFirstChangeWaitsOnlyForDebounce(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := pacer{debounce: 100 * time.Millisecond, minCommitInterval: 10 * time.Second}
	_, ok := p.due()
	assert.False(t, ok, "nothing pending")

	p.changed(t0)
	at, ok := p.due()
	assert.True(t, ok)
	assert.Equal(t, t0.Add(100*time.Millisecond), at)

	p.changed(t0.Add(50 * time.Millisecond))
	at, _ = p.due()
	assert.Equal(t, t0.Add(150*time.Millisecond), at, "a change within the debounce joins the batch")
}

func TestPacerTrickleCannotPostponeForever(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := pacer{debounce: 100 * time.Millisecond}
	for i := range 50 {
		p.changed(t0.Add(time.Duration(i) * 90 * time.Millisecond))
	}
	at, _ := p.due()
	assert.Equal(t, t0.Add(time.Second), at, "capped at 10 debounce windows after the first change")
}

func TestPacerAtMostOneCommitPerInterval(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := pacer{debounce: 100 * time.Millisecond, minCommitInterval: 10 * time.Second}
	p.changed(t0)
	p.started()
	p.committed(t0.Add(200 * time.Millisecond))

	p.changed(t0.Add(time.Second))
	at, _ := p.due()
	assert.Equal(t, t0.Add(10200*time.Millisecond), at, "churn right after a commit waits for the interval")

	p.started()
	p.changed(t0.Add(time.Minute))
	at, _ = p.due()
	assert.Equal(t, t0.Add(time.Minute+100*time.Millisecond), at, "after a quiet spell only the debounce applies")
}

// A cycle that could not publish is retried after a backoff, 1s doubling
// to a minute with up to a fifth more at random, not at the next resync
// (5 minutes by default), which is what a Git server down for 20 s cost
// before; one that publishes starts the backoff again.
func TestPacerRetriesAFailedPublish(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := pacer{debounce: 100 * time.Millisecond, minCommitInterval: 10 * time.Second}
	p.changed(t0)
	p.started()

	var waits []time.Duration
	now := t0
	for range 9 {
		d := p.failed(now, 0)
		at, ok := p.due()
		assert.True(t, ok, "what failed to publish is pending again")
		assert.Equal(t, now.Add(d), at)
		waits = append(waits, d)
		p.started()
		now = at
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, time.Minute, time.Minute, time.Minute}, waits)

	assert.Equal(t, 72*time.Second, p.failed(now, 0.999999999).Round(time.Second), "jitter adds up to a fifth")
	p.started()
	p.published()
	p.changed(now)
	at, _ := p.due()
	assert.Equal(t, now.Add(100*time.Millisecond), at, "after a publish, a change waits only for the debounce")
	assert.Equal(t, time.Second, p.failed(now, 0), "and the backoff starts again")
}

// Only a failure to update the repository is retried soon: not a member
// problem (the next event or resync reads it again), not a fenced leader
// (it must stop writing), not a commit verification refuses (no retry
// mends it).
func TestRetryPublish(t *testing.T) {
	assert.True(t, retryPublish(&RepoError{errors.New("push: connection refused")}))
	assert.False(t, retryPublish(nil))
	assert.False(t, retryPublish(&PartialError{Failed: []string{"cluster-2"}}))
	assert.False(t, retryPublish(&RepoError{fmt.Errorf("update repository: %w", ErrFenced)}))
	assert.False(t, retryPublish(&RepoError{&gitsync.VerifyError{}}))
	assert.False(t, retryPublish(&RepoError{&gitsync.RewrittenError{}}))
	assert.False(t, retryPublish(&RepoError{&MissingSnapshotError{Member: "cluster-2"}}))
}

// A cycle under run has no deadline of its own (each phase has one), and
// a shutdown cancels it only after the grace.
func TestGracedCycle(t *testing.T) {
	parent, stop := context.WithCancel(context.Background())
	ctx, done := graced(parent, 50*time.Millisecond)
	defer done()
	_, has := ctx.Deadline()
	assert.False(t, has, "no deadline for the whole cycle")
	stop()
	assert.NoError(t, ctx.Err(), "not cut short by the shutdown at once")
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled after the grace")
	}

	ctx, done = graced(context.Background(), time.Hour)
	done()
	assert.Error(t, ctx.Err(), "done releases it")
}
