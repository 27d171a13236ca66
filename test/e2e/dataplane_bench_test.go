// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/lab"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// ms is a duration in milliseconds, for ReportMetric.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pct is the p-th percentile of sorted durations (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

// firstAnswer polls url from pc every 20 ms until a request succeeds and
// returns how long that took from start.
func firstAnswer(tb testing.TB, ctx context.Context, pc *lab.Client, url string, start time.Time) time.Duration {
	tb.Helper()
	for {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := pc.Get(ctx, url)
		cancel()
		if err == nil {
			return time.Since(start)
		}
		if time.Since(start) > 30*time.Second {
			tb.Fatalf("%s: no answer 30 s after it was created: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// benchService is Service ns/name on port 80 selecting app=web's 8080.
func benchService(ns, name string) *corev1.Service {
	svc := tenant.Service(ns, name, corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt(8080), Protocol: corev1.ProtocolTCP})
	svc.Spec.Selector = map[string]string{"app": "web"}
	return svc
}

// BenchmarkDataPlaneExportToRequest: under `run`, from creating a Service
// and its ServiceExport in cluster-1 to the first request a pod in
// cluster-2 gets answered through the ClusterSet name. The floor, in the
// same run: from creating a plain Service in cluster-2 to the first answer
// through its cluster.local name (endpointslice controller, CoreDNS and
// kube-proxy, no mcs-gitops).
func BenchmarkDataPlaneExportToRequest(b *testing.B) {
	const samples = 20
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(quietLog())
	w, l := labWorld(b, []envtest.Stack{envtest.DualStack, envtest.DualStack, envtest.DualStack}, "    minCommitInterval: \"0\"\n")
	w.loop.Log = benchLog(b)
	ctx := b.Context()
	c1, c2 := l.Members[0], l.Members[1]
	serveEcho(b, c1, "bench", "web", 2)
	serveEcho(b, c2, "bench", "web", 2)
	require.NoError(b, envtest.EnsureNamespaces(ctx, l.Members[2].Cluster.Client, "bench"))
	pc := clientPod(b, c2, "bench")
	runLoop(b, w)
	var lat, floor []time.Duration
	n := 0
	for b.Loop() {
		for range samples {
			n++
			local := fmt.Sprintf("local-%d", n)
			start := time.Now()
			require.NoError(b, c2.Cluster.Client.Create(ctx, benchService("bench", local)))
			floor = append(floor, firstAnswer(b, ctx, pc, "http://"+local+".bench.svc.cluster.local/", start))

			name := fmt.Sprintf("svc-%d", n)
			start = time.Now()
			require.NoError(b, c1.Cluster.Client.Create(ctx, benchService("bench", name)))
			require.NoError(b, c1.Cluster.Client.Create(ctx, tenant.Export("bench", name)))
			lat = append(lat, firstAnswer(b, ctx, pc, "http://"+name+".bench.svc.clusterset.local/", start))
		}
	}
	slices.Sort(lat)
	slices.Sort(floor)
	b.ReportMetric(ms(pct(lat, 50)), "p50-ms")
	b.ReportMetric(ms(pct(lat, 99)), "p99-ms")
	b.ReportMetric(ms(pct(floor, 50)), "floor-p50-ms")
	b.ReportMetric(ms(pct(floor, 99)), "floor-p99-ms")
	b.ReportMetric(float64(pct(lat, 50))/float64(pct(floor, 50)), "p50/floor")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkDataPlaneFailOver: cluster-2's FailOver policy prefers its own
// web pods and falls back to cluster-1's. Under `run`, with a client in
// cluster-2 sending requests back to back: from cluster-2's pods failing
// their readiness probe to every request being answered by cluster-1
// (failover), and back once they pass again (failback); and how many
// requests failed on the way.
func BenchmarkDataPlaneFailOver(b *testing.B) {
	const samples = 10
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(quietLog())
	l, pc := failOverWorld(b)
	ctx := b.Context()
	c2 := l.Members[1]
	url := "http://web.demo.svc.clusterset.local/"
	startTraffic(ctx, pc, url).stopWhen(b, 60*time.Second, func(r []result) bool { return tail(r, 20, "cluster-2") })

	var over, back []time.Duration
	requests, failed := 0, 0
	// switchAfter moves readiness and returns how long until the last
	// answer from the member traffic is leaving.
	switchAfter := func(ready bool, from, to string) time.Duration {
		tr := startTraffic(ctx, pc, url)
		start := time.Now()
		setReadiness(b, c2, pc, "demo", "web", ready)
		res := tr.stopWhen(b, 30*time.Second, func(r []result) bool { return tail(r, 20, to) })
		requests += len(res)
		failed += count(res, "error")
		return max(0, lastFrom(res, from).Sub(start))
	}
	for b.Loop() {
		for range samples {
			over = append(over, switchAfter(false, "cluster-2", "cluster-1"))
			back = append(back, switchAfter(true, "cluster-1", "cluster-2"))
		}
	}
	slices.Sort(over)
	slices.Sort(back)
	b.ReportMetric(ms(pct(over, 50)), "failover-p50-ms")
	b.ReportMetric(ms(pct(over, 99)), "failover-p99-ms")
	b.ReportMetric(ms(pct(back, 50)), "failback-p50-ms")
	b.ReportMetric(float64(failed), "failed-requests")
	b.ReportMetric(float64(requests), "requests")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkDataPlaneUnexport: web is exported by cluster-1 and cluster-3;
// with a client in cluster-2 sending requests back to back, cluster-3
// unexports (and exports again) under `run`: how long until cluster-3 no
// longer answers, and how many requests failed.
func BenchmarkDataPlaneUnexport(b *testing.B) {
	const samples = 10
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(quietLog())
	w, l := labWorld(b, []envtest.Stack{envtest.DualStack, envtest.DualStack, envtest.DualStack}, "    minCommitInterval: \"0\"\n")
	w.loop.Log = quietLog()
	ctx := b.Context()
	c1, c2, c3 := l.Members[0], l.Members[1], l.Members[2]
	for _, m := range []*lab.Member{c1, c3} {
		serveEcho(b, m, "demo", "web", 2)
		require.NoError(b, m.Cluster.Client.Create(ctx, tenant.Export("demo", "web")))
	}
	pc := clientPod(b, c2, "demo")
	runLoop(b, w)
	url := "http://web.demo.svc.clusterset.local/"
	both := func(r []result) bool {
		return len(r) >= 40 && count(r[len(r)-40:], "cluster-3") > 0 && count(r[len(r)-40:], "cluster-1") > 0
	}
	startTraffic(ctx, pc, url).stopWhen(b, 60*time.Second, both)
	var gone []time.Duration
	requests, failed := 0, 0
	for b.Loop() {
		for range samples {
			tr := startTraffic(ctx, pc, url)
			start := time.Now()
			unexport(b, c3.Cluster, "demo", "web")
			res := tr.stopWhen(b, 30*time.Second, func(r []result) bool { return tail(r, 20, "cluster-1") })
			gone = append(gone, max(0, lastFrom(res, "cluster-3").Sub(start)))
			requests += len(res)
			failed += count(res, "error")
			tr = startTraffic(ctx, pc, url)
			require.NoError(b, c3.Cluster.Client.Create(ctx, tenant.Export("demo", "web")))
			res = tr.stopWhen(b, 30*time.Second, both)
			requests += len(res)
			failed += count(res, "error")
		}
	}
	slices.Sort(gone)
	b.ReportMetric(ms(pct(gone, 50)), "unexport-p50-ms")
	b.ReportMetric(ms(pct(gone, 99)), "unexport-p99-ms")
	b.ReportMetric(float64(failed), "failed-requests")
	b.ReportMetric(float64(requests), "requests")
	b.ReportMetric(0, "ns/op")
}
