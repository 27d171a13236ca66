// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// gatewayMember puts member i in gateway mode behind 192.0.2.(i+1).
func gatewayMember(i int) string {
	return fmt.Sprintf("    mode: gateway\n    gateway:\n      host: 192.0.2.%d\n      namespace: mcs-gateway\n      name: east-west\n      tcpPorts: {from: 30000, to: 30009}\n", i+1)
}

// fsmDemo is the FSM multi-cluster demo on real apiservers: httpbin
// exported from cluster-1 and cluster-3, and from cluster-2 itself, whose
// FailOver policy prefers its own endpoints and falls back to cluster-1
// and cluster-3 (every target with a ready endpoint, as FSM does). Every
// member is in gateway mode.
func fsmDemo(t testing.TB, extra string) *world {
	w := newWorldWith(t, 3, gatewayMember, extra)
	ctx := context.Background()
	export(t, w.member("cluster-1"), "httpbin", "httpbin", 8080, "10.1.0.10")
	export(t, w.member("cluster-3"), "httpbin", "httpbin", 8080, "10.3.0.10")
	c2 := w.member("cluster-2")
	export(t, c2, "httpbin", "httpbin", 8080, "10.2.0.10")
	require.NoError(t, c2.Client.Create(ctx, &v1alpha1.GlobalTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "httpbin"},
		Spec: v1alpha1.GlobalTrafficPolicySpec{LbType: v1alpha1.FailOver, Targets: []v1alpha1.TrafficTarget{
			{ClusterKey: "//default/cluster-1"}, {ClusterKey: "//default/cluster-3"},
		}},
	}))
	return w
}

// importedFrom lists "source-cluster address:port" for every endpoint of
// the derived Service of httpbin/httpbin in member m.
func importedFrom(t testing.TB, m *envtest.Cluster) []string {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	require.NoError(t, m.Client.List(context.Background(), &list, client.InNamespace("httpbin"),
		client.MatchingLabels{discoveryv1.LabelServiceName: render.DerivedServiceName("httpbin", "httpbin")}))
	var out []string
	for _, sl := range list.Items {
		for _, e := range sl.Endpoints {
			for _, p := range sl.Ports {
				out = append(out, fmt.Sprintf("%s %s:%d", sl.Labels["multicluster.kubernetes.io/source-cluster"], e.Addresses[0], *p.Port))
			}
		}
	}
	sort.Strings(out)
	return out
}

// setReady marks every endpoint of m's own httpbin slice ready or not, as
// the endpoint slice controller does when the pods' readiness changes.
func setReady(t testing.TB, m *envtest.Cluster, ready bool) {
	t.Helper()
	ctx := context.Background()
	var sl discoveryv1.EndpointSlice
	require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: "httpbin-" + m.Name}, &sl))
	for i := range sl.Endpoints {
		sl.Endpoints[i].Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)}
	}
	require.NoError(t, m.Client.Update(ctx, &sl))
}

var (
	local    = []string{"cluster-2 10.2.0.10:8080"}
	failover = []string{"cluster-1 192.0.2.1:80", "cluster-3 192.0.2.3:80"}
)

// TestGatewayModeFailOverInSync: the routes and slices gateway mode
// renders are accepted by real apiservers with the Gateway API CRDs, and
// FailOver follows the consumer's endpoint readiness at each sync, in both
// directions, with the policy's status saying what was chosen.
func TestGatewayModeFailOverInSync(t *testing.T) {
	w := fsmDemo(t, "")
	w.loop.Events = true
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	out := w.sync()
	require.Empty(t, out.FailedMembers())

	assert.Equal(t, local, importedFrom(t, c2), "local endpoints are ready: cluster-2 keeps them")
	assert.Equal(t, []string{"cluster-1 10.1.0.10:8080", "cluster-2 192.0.2.2:80", "cluster-3 192.0.2.3:80"}, importedFrom(t, c1),
		"without a policy cluster-1 gets its own pods and the others through their gateways")
	for _, m := range []*envtest.Cluster{c1, c2, c3} {
		route := &unstructured.Unstructured{}
		route.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"})
		require.NoError(t, m.Client.Get(context.Background(), client.ObjectKey{Namespace: "httpbin", Name: "httpbin-clusterset"}, route),
			"%s: the clusterset HTTPRoute was applied", m.Name)
		hosts, _, _ := unstructured.NestedStringSlice(route.Object, "spec", "hostnames")
		assert.Equal(t, []string{"httpbin.httpbin.svc.clusterset.local"}, hosts)
	}
	assertPolicy(t, c2, []string{"cluster-2"})

	setReady(t, c2, false)
	w.sync()
	assert.Equal(t, failover, importedFrom(t, c2), "no local endpoint is ready: every ready target, through its gateway")
	assertPolicy(t, c2, []string{"cluster-1", "cluster-3"})

	setReady(t, c1, false)
	w.sync()
	assert.Equal(t, []string{"cluster-3 192.0.2.3:80"}, importedFrom(t, c2), "a target without a ready endpoint drops out")

	setReady(t, c1, true)
	setReady(t, c2, true)
	w.sync()
	assert.Equal(t, local, importedFrom(t, c2), "local endpoints ready again: back to them")
	assertPolicy(t, c2, []string{"cluster-2"})

	// kubectl describe globaltrafficpolicy tells the failover and failback.
	w.loop.CloseEvents(10 * time.Second)
	var notes []string
	for _, e := range eventsOf(t, c2, "httpbin", "GlobalTrafficPolicy", "httpbin") {
		notes = append(notes, e[:strings.Index(e, " (commit ")])
	}
	assert.ElementsMatch(t, []string{
		"Normal Applied: routing to cluster-2",
		"Normal Rerouted: traffic now goes to cluster-1 first (was cluster-2)",
		"Normal Rerouted: traffic now goes to cluster-3 first (was cluster-1)",
		"Normal Rerouted: traffic now goes to cluster-2 first (was cluster-3)",
	}, notes)
}

func assertPolicy(t *testing.T, m *envtest.Cluster, clusters []string) {
	t.Helper()
	var p v1alpha1.GlobalTrafficPolicy
	require.NoError(t, m.Client.Get(context.Background(), client.ObjectKey{Namespace: "httpbin", Name: "httpbin"}, &p))
	assert.Equal(t, clusters, p.Status.Clusters)
	conds := map[string]string{}
	for _, c := range p.Status.Conditions {
		conds[c.Type] = string(c.Status)
	}
	assert.Equal(t, map[string]string{"Accepted": "True", "Applied": "True"}, conds)
}

// TestGatewayModeFailOverInRun: the controller switches the consumer's
// slices to the target after its local endpoints stop being ready, and
// back after they recover, without anyone running sync.
func TestGatewayModeFailOverInRun(t *testing.T) {
	w := fsmDemo(t, "    minCommitInterval: \"0\"\n")
	c2 := w.member("cluster-2")
	runLoop(t, w)
	eventually(t, 20*time.Second, func() bool { return slices.Equal(importedFrom(t, c2), local) }, "first cycle did not import")

	start := time.Now()
	setReady(t, c2, false)
	eventually(t, 20*time.Second, func() bool { return slices.Equal(importedFrom(t, c2), failover) }, "no failover after 20 s")
	t.Logf("failover: %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	setReady(t, c2, true)
	eventually(t, 20*time.Second, func() bool { return slices.Equal(importedFrom(t, c2), local) }, "no failback after 20 s")
	t.Logf("failback: %s", time.Since(start).Round(time.Millisecond))
}

// BenchmarkFailOverSwitch measures, in the controller, the time from the
// consumer's local endpoints turning not ready to its slices pointing at
// the FailOver target (and back), debounce included, minCommitInterval 0.
// MCS_BENCH_SERVICES adds that many generated services to every member
// (BenchmarkFleet's world); MCS_BENCH_LOG as there.
func BenchmarkFailOverSwitch(b *testing.B) {
	const samples = 10
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(quietLog())
	w := fsmDemo(b, "    minCommitInterval: \"0\"\n")
	w.loop.Log = benchLog(b)
	if n := envInt(b, "MCS_BENCH_SERVICES", 0); n > 0 {
		// The demo among n generated services a member, exported from 2
		// members each: the FailOver decided in a fleet-sized world.
		seedGenerated(b, w, n)
	}
	c2 := w.member("cluster-2")
	runLoop(b, w)
	wait := func(want []string, limit time.Duration) time.Duration {
		start := time.Now()
		for !slices.Equal(importedFrom(b, c2), want) {
			if time.Since(start) > limit {
				b.Fatalf("slices not %v after %s", want, limit)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}
	wait(local, 5*time.Minute) // the first sync: minutes with MCS_BENCH_SERVICES
	// Sample once a whole cycle has succeeded (the first one applies
	// every object, and may need a second to finish their status).
	settled := time.Now()
	for testutil.ToFloat64(w.loop.Metrics.LastSuccessfulCycle) == 0 {
		if time.Since(settled) > 10*time.Minute {
			b.Fatal("no successful cycle within 10 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	var over, back []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for range samples {
			setReady(b, c2, false)
			over = append(over, wait(failover, 20*time.Second))
			setReady(b, c2, true)
			back = append(back, wait(local, 20*time.Second))
		}
	}
	slices.Sort(over)
	slices.Sort(back)
	b.ReportMetric(float64(over[len(over)/2].Microseconds())/1000, "failover-p50-ms")
	b.ReportMetric(float64(back[len(back)/2].Microseconds())/1000, "failback-p50-ms")
	b.ReportMetric(float64(over[len(over)-1].Microseconds())/1000, "failover-max-ms")
	b.ReportMetric(0, "ns/op")
}

// TestGatewayDNSHostResolvedAtReadTime: a gateway host that is a DNS name
// is resolved when the member is read, the consumer's slices point at the
// answer, a failed lookup keeps the last committed addresses instead of
// cutting the consumer off, and a new answer moves the slices.
func TestGatewayDNSHostResolvedAtReadTime(t *testing.T) {
	w := newWorldWith(t, 2, func(i int) string {
		if i != 0 {
			return ""
		}
		return "    mode: gateway\n    gateway:\n      host: gw.cluster-1.test\n      namespace: mcs-gateway\n      name: east-west\n"
	}, "")
	var answer atomic.Value
	answer.Store("203.0.113.7")
	lookup := func(_ context.Context, host string) ([]string, error) {
		if a := answer.Load().(string); a != "" {
			return []string{a}, nil
		}
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	w.loop.Members = clusters.Connect(context.Background(), w.loop.Config, clusters.ConnectOptions{BaseDir: w.dir, LookupHost: lookup})
	c2 := w.member("cluster-2")
	require.NoError(t, envtest.EnsureNamespaces(context.Background(), c2.Client, "httpbin"))
	export(t, w.member("cluster-1"), "httpbin", "httpbin", 8080, "10.1.0.10")

	w.sync()
	want := []string{"cluster-1 203.0.113.7:80"}
	assert.Equal(t, want, importedFrom(t, c2))

	answer.Store("")
	out := w.sync()
	assert.False(t, out.Committed, "a failed lookup changes nothing")
	assert.Equal(t, want, importedFrom(t, c2))

	answer.Store("203.0.113.8")
	w.sync()
	assert.Equal(t, []string{"cluster-1 203.0.113.8:80"}, importedFrom(t, c2))
}
