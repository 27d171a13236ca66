// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestLeaderElectionOneCommitter: two replicas on one Lease in a real
// apiserver; only one ever runs the loop, and when it stops the other
// takes over.
func TestLeaderElectionOneCommitter(t *testing.T) {
	mgmt := envtest.Start(t, 1)[0]
	require.NoError(t, envtest.EnsureNamespaces(context.Background(), mgmt.Client, "mcs-gitops"))
	var active, most atomic.Int32
	leaders := make(chan string, 4)
	replica := func(id string) (context.CancelFunc, <-chan error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		le := reconcile.LeaderElection{Config: mgmt.Config, Namespace: "mcs-gitops", Name: "mcs-gitops", Identity: id,
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond}
		go func() {
			done <- reconcile.Lead(ctx, le, nil, func(ctx context.Context, _ reconcile.Fence) {
				n := active.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				leaders <- id
				<-ctx.Done()
				active.Add(-1)
			})
		}()
		return cancel, done
	}
	cancelA, doneA := replica("replica-a")
	cancelB, doneB := replica("replica-b")
	defer cancelA()
	defer cancelB()

	var first string
	select {
	case first = <-leaders:
	case <-time.After(15 * time.Second):
		t.Fatal("nobody became leader")
	}
	time.Sleep(3 * time.Second) // several lease periods
	assert.Equal(t, int32(1), most.Load(), "two replicas led at once")

	stopFirst, firstDone := cancelA, doneA
	if first == "replica-b" {
		stopFirst, firstDone = cancelB, doneB
	}
	stopFirst()
	assert.NoError(t, <-firstDone, "a replica asked to stop returns cleanly and releases the Lease")
	select {
	case second := <-leaders:
		assert.NotEqual(t, first, second)
	case <-time.After(15 * time.Second):
		t.Fatal("the standby did not take over")
	}
	assert.Equal(t, int32(1), most.Load())
}
