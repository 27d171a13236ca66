// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// notifications records Watch's notify calls.
type notifications chan string

func (n notifications) notify(member string) {
	select {
	case n <- member:
	default:
	}
}

// waitFor waits for a notification for member, dropping others.
func (n notifications) waitFor(t *testing.T, member string, within time.Duration) time.Duration {
	t.Helper()
	begin := time.Now()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case m := <-n:
			if m == member {
				return time.Since(begin)
			}
		case <-timer.C:
			t.Fatalf("no notification for %s within %s", member, within)
		}
	}
}

// quiet fails if member is notified during d; others are dropped.
func (n notifications) quiet(t *testing.T, member string, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case m := <-n:
			if m == member {
				t.Fatalf("unexpected notification for %s", member)
			}
		case <-timer.C:
			return
		}
	}
}

// settle drains notifications until none came for d.
func (n notifications) settle(d time.Duration) {
	for {
		select {
		case <-n:
		case <-time.After(d):
			return
		}
	}
}

// testWatch runs inside TestLive: c1 is seeded by seedCluster1, c2 has
// only-in-2/web exported, c3 is reached through a proxy that starts down.
func testWatch(t *testing.T, c1, c2, c3 *envtest.Cluster) {
	ctx := context.Background()
	p := newProxy(t, strings.Trim(strings.TrimPrefix(c3.Config.Host, "https://"), "/"))
	set := memberSet(t,
		&clusters.Member{Name: "cluster-1", Config: c1.Config},
		&clusters.Member{Name: "cluster-2", Config: c2.Config},
		&clusters.Member{Name: "late", Config: withHost(c3.Config, p.addr)},
		&clusters.Member{Name: "broken", Err: errBroken},
	)
	n := make(notifications, 1024)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- set.Watch(wctx, n.notify) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Watch did not return after its context ended")
		}
	}()

	// The initial lists notify; then it goes quiet.
	n.waitFor(t, "cluster-2", 10*time.Second)
	n.settle(time.Second)

	begin := time.Now()
	tenant.Create(t, c2.Client, tenant.Export("only-in-2", "api"))
	n.waitFor(t, "cluster-2", 5*time.Second)
	t.Logf("ServiceExport create → notify in %s", time.Since(begin))

	// Status written back by apply is not a change; a label is.
	var exports mcsv1alpha1.ServiceExportList
	if err := c2.Client.List(ctx, &exports); err != nil || len(exports.Items) == 0 {
		t.Fatalf("list exports in cluster-2: %v (%d)", err, len(exports.Items))
	}
	se := exports.Items[0]
	se.Status.Conditions = []metav1.Condition{{Type: "Valid", Status: metav1.ConditionTrue, Reason: "Valid",
		LastTransitionTime: metav1.Now()}}
	if err := c2.Client.Status().Update(ctx, &se); err != nil {
		t.Fatal(err)
	}
	n.quiet(t, "cluster-2", 1500*time.Millisecond)
	se.Labels = map[string]string{"team": "payments"}
	if err := c2.Client.Update(ctx, &se); err != nil {
		t.Fatal(err)
	}
	n.waitFor(t, "cluster-2", 5*time.Second)

	// A traffic policy: created, its spec changed and deleted are changes;
	// the status apply writes back is not.
	policy := gtp("only-in-2", "api", v1alpha1.FailOver, "//default/cluster-1")
	tenant.Create(t, c2.Client, policy)
	n.waitFor(t, "cluster-2", 5*time.Second)
	policy.Status.Clusters = []string{"cluster-1"}
	if err := c2.Client.Status().Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	n.quiet(t, "cluster-2", 1500*time.Millisecond)
	policy.Spec.LbType = v1alpha1.ActiveActive
	if err := c2.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	n.waitFor(t, "cluster-2", 5*time.Second)
	if err := c2.Client.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	n.waitFor(t, "cluster-2", 5*time.Second)

	// Objects mcs-gitops applied and Services nobody exports are not changes.
	derived, plain := labelled(tenant.Service("httpbin", "derived-abc"), ours), tenant.Service("httpbin", "plain")
	tenant.Create(t, c1.Client, derived, plain, labelled(slice(derived, "derived-abc-x"), ours), slice(plain, "plain-1"))
	n.quiet(t, "cluster-1", 1500*time.Millisecond)

	// An exported Service's slice changing is a change.
	var sl discoveryv1.EndpointSlice
	if err := c1.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: "httpbin-abc"}, &sl); err != nil {
		t.Fatal(err)
	}
	sl.Endpoints[0].Conditions.Ready = ptr.To(false)
	if err := c1.Client.Update(ctx, &sl); err != nil {
		t.Fatal(err)
	}
	n.waitFor(t, "cluster-1", 5*time.Second)

	// A member that was down all along is noticed when it comes up.
	p.start()
	took := n.waitFor(t, "late", 45*time.Second)
	t.Logf("member up → notify in %s", took)
}

var errBroken = brokenErr{}

type brokenErr struct{}

func (brokenErr) Error() string { return "member \"broken\": kubeconfig missing" }
