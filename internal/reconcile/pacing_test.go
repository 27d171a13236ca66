// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
