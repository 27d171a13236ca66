// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderElection says which Lease in the management cluster guards the
// repository, so two replicas never both commit.
type LeaderElection struct {
	Config    *rest.Config
	Namespace string
	Name      string
	// Identity defaults to the hostname plus a random suffix.
	Identity string
	// Lease timings; zero values take client-go's usual 15s/10s/2s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Lead runs fn while this process holds the Lease. When the Lease is lost
// fn's context is cancelled and Lead returns an error: the caller exits,
// and a restarted replica starts clean rather than racing the new leader.
// fn gets the Fence every write must pass (renewals says why the
// cancelled context alone is not enough).
func Lead(ctx context.Context, le LeaderElection, m *Metrics, fn func(ctx context.Context, fence Fence)) error {
	cs, err := kubernetes.NewForConfig(le.Config)
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	id := le.Identity
	if id == "" {
		host, _ := os.Hostname()
		id = host + "-" + rand.String(6)
	}
	renewDeadline := orDefault(le.RenewDeadline, 10*time.Second)
	held := &renewals{valid: renewDeadline, now: time.Now}
	lock := renewingLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: le.Name},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}, r: held}
	lost := make(chan struct{})
	cfg := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		ReleaseOnCancel: true,
		LeaseDuration:   orDefault(le.LeaseDuration, 15*time.Second),
		RenewDeadline:   renewDeadline,
		RetryPeriod:     orDefault(le.RetryPeriod, 2*time.Second),
		Name:            le.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				if m != nil {
					m.IsLeader.Set(1)
				}
				fn(ctx, held.check)
			},
			OnStoppedLeading: func() {
				if m != nil {
					m.IsLeader.Set(0)
				}
				close(lost)
			},
		},
	}
	elector, err := leaderelection.NewLeaderElector(cfg)
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	elector.Run(ctx)
	<-lost
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("lost the leader Lease %s/%s", le.Namespace, le.Name)
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
