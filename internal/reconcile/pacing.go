// SPDX-License-Identifier: Apache-2.0

package reconcile

import "time"

// pacer decides when the controller starts the next cycle. Two rules:
// a change waits out the debounce (more changes within it join the same
// cycle), and a cycle that would follow a commit sooner than
// minCommitInterval waits for the interval, so endpoint churn becomes at
// most one commit per interval. The first change after a quiet spell is
// held back by the debounce only.
//
// It is pure: callers pass the clock in, so the rules are tested without
// sleeping.
type pacer struct {
	debounce, minCommitInterval time.Duration

	pending    bool
	firstEvent time.Time // first change not yet handled by a cycle
	lastEvent  time.Time
	lastCommit time.Time // zero until the first commit
	// failures counts cycles in a row that could not publish; retryAt is
	// when the next may try again.
	failures int
	retryAt  time.Time
}

// Retries after a failed publish back off from firstRetry, doubling, up
// to maxRetry, each stretched by up to a fifth at random so that replicas
// of many ClusterSets sharing a Git server do not retry in step.
const (
	firstRetry = time.Second
	maxRetry   = time.Minute
)

// maxDebounceFactor caps how long a steady trickle of changes can keep
// postponing a cycle: at most this many debounce windows after the first.
const maxDebounceFactor = 10

// changed records a watch event at now.
func (p *pacer) changed(now time.Time) {
	if !p.pending {
		p.pending = true
		p.firstEvent = now
	}
	p.lastEvent = now
}

// due returns when the pending change should be handled, and false when
// nothing is pending.
func (p *pacer) due() (time.Time, bool) {
	if !p.pending {
		return time.Time{}, false
	}
	at := p.lastEvent.Add(p.debounce)
	if limit := p.firstEvent.Add(maxDebounceFactor * p.debounce); at.After(limit) {
		at = limit
	}
	if !p.lastCommit.IsZero() {
		if next := p.lastCommit.Add(p.minCommitInterval); next.After(at) {
			at = next
		}
	}
	if p.retryAt.After(at) {
		at = p.retryAt
	}
	return at, true
}

// failed records that the cycle that started last could not publish
// (the Git server down, say): what it was to publish is pending again,
// retried after a backoff, and not left for the next resync. jitter, in
// [0, 1), is the caller's randomness. It returns the backoff.
func (p *pacer) failed(now time.Time, jitter float64) time.Duration {
	d := firstRetry << min(p.failures, 6)
	d = min(d, maxRetry)
	d += time.Duration(jitter * float64(d) / 5)
	p.failures++
	p.retryAt = now.Add(d)
	p.changed(now)
	return d
}

// published records that a cycle published (or had nothing to): the
// backoff starts again from the first retry.
func (p *pacer) published() {
	p.failures = 0
	p.retryAt = time.Time{}
}

// started marks the pending changes as taken by a cycle starting now;
// changes arriving during the cycle make a new pending batch.
func (p *pacer) started() { p.pending = false }

// committed records that the cycle made a commit at now.
func (p *pacer) committed(now time.Time) { p.lastCommit = now }
