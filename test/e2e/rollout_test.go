// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/fleetstatus"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/dns"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// rolloutConfig stages changes over three waves: cluster-2 (the canary,
// by label, soaking 2s), cluster-3, then the rest (cluster-4 and the
// exporter, cluster-1).
const rolloutConfig = `  rollout:
    waves:
    - name: canary
      members: {matchLabels: {canary: "yes"}}
      soak: 2s
    - name: second
      members: {names: [cluster-3]}
`

// clock is a loop's clock that a test can move ahead of the real one, so
// the loop follows its branch (every minute) when the test needs it to.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// TestStagedRolloutOnRealMembers: a new export rolls out over three
// waves with a soak, each wave its own commit; churn during the rollout
// lands at once where the service is imported; a member that refuses the
// derived Service (an admission policy) pauses the rollout, which says
// where in the export's status and in status/rollouts.yaml, and stays
// paused after the fix until a person resumes it by a commit; the waves
// then finish. A port change then rolls out to the canary and is aborted:
// the canary is back at the old port.
func TestStagedRolloutOnRealMembers(t *testing.T) {
	w := newWorldWith(t, 4, func(i int) string {
		if i == 1 {
			return "    labels: {canary: \"yes\"}\n"
		}
		return ""
	}, rolloutConfig)
	ck := &clock{}
	w.loop.Now = ck.now
	w.loop.Events = true
	defer w.loop.CloseEvents(5 * time.Second)
	metrics := reconcile.NewMetrics()
	w.loop.Metrics = metrics
	ctx := context.Background()
	c1, c2, c3, c4 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3"), w.member("cluster-4")
	for _, m := range w.members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	}
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	require.Empty(t, w.sync().FailedMembers())
	assert.True(t, exists(c4.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "the first commit stages nothing")

	// Wave 1: the canary alone.
	export(t, c1, "shop", "web", 80, "10.1.0.20")
	w.loop.Members.Forget()
	out := w.sync()
	require.True(t, out.Committed)
	_, msg := w.remoteHead()
	assert.True(t, strings.HasPrefix(msg, "roll out shop/web: wave 1 of 3 (canary): cluster-2"), msg)
	si := &mcsv1alpha1.ServiceImport{}
	require.True(t, exists(c2.Client, si, "shop", "web"), "the canary imports")
	assert.NotEmpty(t, si.Spec.IPs, "with its ClusterSet IP: a gate")
	for _, m := range []*envtest.Cluster{c1, c3, c4} {
		assert.False(t, exists(m.Client, &mcsv1alpha1.ServiceImport{}, "shop", "web"), "%s is behind", m.Name)
	}
	_, _, ready := exportCondition(t, c1, "shop", "web", "Ready")
	assert.Contains(t, ready, "rolling out: wave 1 of 3 (canary); not yet in cluster-3, cluster-1, cluster-4")
	require.False(t, out.WakeAt.IsZero(), "the gates hold: the loop wakes when the soak ends")
	holds := out.WakeAt.Add(-2 * time.Second)

	// Churn lands at once where web is imported, and cart's everywhere.
	addEndpoint(t, c1, "shop", "web", "10.1.0.21")
	addEndpoint(t, c1, "shop", "cart", "10.1.0.11")
	w.loop.Members.Forget()
	w.sync()
	assert.Equal(t, 2, importedEndpoints(t, c2, "shop", "web"), "the canary sees the new endpoint")
	assert.Equal(t, 2, importedEndpoints(t, c4, "shop", "cart"), "churn of a service not rolling out is everywhere")
	assert.False(t, exists(c3.Client, &mcsv1alpha1.ServiceImport{}, "shop", "web"), "churn brings no wave early")

	// cluster-3 will refuse web's derived Service.
	derived := render.DerivedServiceName("shop", "web")
	allow, err := envtest.DenyService(ctx, c3.Client, "shop", derived, "quota: no more Services")
	require.NoError(t, err)
	eventually(t, 30*time.Second, func() bool {
		svc := tenant.Service("shop", derived, tenant.Port("http", 80, 80))
		err := c3.Client.Create(ctx, svc, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "quota")
	}, "the admission policy is not enforced")

	// Wave 2 once the canary soaked.
	time.Sleep(time.Until(out.WakeAt.Add(-ck.offset)))
	out, err = w.loop.Sync(ctx)
	committed := time.Now().Add(ck.offset)
	var partial *reconcile.PartialError
	require.True(t, errors.As(err, &partial), "cluster-3 refuses the derived Service: %v", err)
	_, msg = w.remoteHead()
	assert.True(t, strings.HasPrefix(msg, "roll out shop/web: wave 2 of 3 (second): cluster-3"), msg)
	t.Logf("from the canary's gates holding to wave 2's commit: %s (soak 2s)", committed.Sub(holds).Round(time.Millisecond))
	require.True(t, out.Again, "a gate failed: the next cycle records the pause")

	// The next commit pauses the rollout and says which gate in which member.
	_, err = w.loop.Sync(ctx)
	require.True(t, errors.As(err, &partial))
	_, msg = w.remoteHead()
	assert.True(t, strings.HasPrefix(msg, "pause rollout of shop/web"), msg)
	st := rollouts(t, w)
	require.Len(t, st.Rollouts, 1)
	p := st.Rollouts[0].Paused
	require.NotNil(t, p)
	assert.Equal(t, "cluster-3", p.Member)
	assert.Equal(t, "applied", p.Gate)
	assert.Contains(t, p.Message, "quota: no more Services")
	_, _, ready = exportCondition(t, c1, "shop", "web", "Ready")
	assert.Contains(t, ready, "paused at wave 2: member cluster-3: applied")
	assert.Equal(t, 1.0, testutil.ToFloat64(metrics.Rollouts.WithLabelValues("paused")))
	view, err := fleetstatus.Build(ctx, fleetstatus.Options{Repo: w.loop.Repo, Members: w.loop.Members})
	require.NoError(t, err)
	var text strings.Builder
	require.NoError(t, view.WriteText(&text))
	assert.Contains(t, text.String(), "ROLLOUTS\n  shop/web: paused at wave 2: member cluster-3: applied: ", "mcs-gitops status shows it")
	assert.Contains(t, text.String(), "    not yet in cluster-1, cluster-4\n")
	eventually(t, 10*time.Second, func() bool {
		return slices.ContainsFunc(eventsOf(t, c1, "shop", "ServiceExport", "web"), func(e string) bool {
			return strings.HasPrefix(e, "Warning RolloutPaused: paused at wave 2: member cluster-3: applied")
		})
	}, "no RolloutPaused Event on the export: %v", eventsOf(t, c1, "shop", "ServiceExport", "web"))

	// Fixed, but paused until a person says so.
	require.NoError(t, allow(ctx))
	w.loop.Members.Forget()
	w.sync()
	assert.True(t, exists(c3.Client, &corev1.Service{}, "shop", derived), "applied once allowed")
	assert.False(t, exists(c4.Client, &mcsv1alpha1.ServiceImport{}, "shop", "web"), "still paused")

	pushRolloutRequest(t, w.remote, "shop/web", rollout.Resume)
	ck.advance(2 * time.Minute) // the loop follows its branch every minute
	out = w.sync()
	_, msg = w.remoteHead()
	assert.True(t, strings.HasPrefix(msg, "resumed rollout of shop/web"), msg)
	require.True(t, out.Again, "wave 2 has no soak: its gates hold, the next wave is due")
	w.sync()
	_, msg = w.remoteHead()
	assert.True(t, strings.HasPrefix(msg, "roll out shop/web: wave 3 of 3 (rest): cluster-1, cluster-4"), msg)
	assert.True(t, exists(c4.Client, &mcsv1alpha1.ServiceImport{}, "shop", "web"))
	w.sync()
	_, msg = w.remoteHead()
	assert.True(t, strings.HasPrefix(msg, "finish rollout of shop/web"), msg)
	assert.Empty(t, rollouts(t, w).Rollouts)
	for _, state := range rollout.States {
		assert.Zero(t, testutil.ToFloat64(metrics.Rollouts.WithLabelValues(state)), "no rollout left %s", state)
	}

	// A port change rolls out to the canary, and is aborted.
	svc := &corev1.Service{}
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, svc))
	svc.Spec.Ports[0].Port = 8080
	require.NoError(t, c1.Client.Update(ctx, svc))
	w.loop.Members.Forget()
	w.sync()
	assert.Equal(t, int32(8080), importPort(t, c2, "shop", "web"), "the canary has the new port")
	assert.Equal(t, int32(80), importPort(t, c4, "shop", "web"), "the rest keep the old one")
	pushRolloutRequest(t, w.remote, "shop/web", rollout.Abort)
	ck.advance(2 * time.Minute)
	w.sync()
	_, msg = w.remoteHead()
	assert.True(t, strings.HasPrefix(msg, "aborted rollout of shop/web"), msg)
	assert.Equal(t, int32(80), importPort(t, c2, "shop", "web"), "aborted: the canary is back at the old port")
	assert.True(t, rollouts(t, w).Rollouts[0].Aborted)
}

func addEndpoint(t *testing.T, m *envtest.Cluster, ns, name, addr string) {
	t.Helper()
	ctx := context.Background()
	s := &discoveryv1.EndpointSlice{}
	require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-" + m.Name}, s))
	s.Endpoints = append(s.Endpoints, tenant.Ready(addr)...)
	require.NoError(t, m.Client.Update(ctx, s))
}

// importedEndpoints counts the endpoints of the slices m imports for
// ns/name.
func importedEndpoints(t *testing.T, m *envtest.Cluster, ns, name string) int {
	t.Helper()
	var l discoveryv1.EndpointSliceList
	require.NoError(t, m.Client.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{mcsv1alpha1.LabelServiceName: name}))
	n := 0
	for _, s := range l.Items {
		n += len(s.Endpoints)
	}
	return n
}

func importPort(t *testing.T, m *envtest.Cluster, ns, name string) int32 {
	t.Helper()
	si := &mcsv1alpha1.ServiceImport{}
	require.True(t, exists(m.Client, si, ns, name), "%s imports %s/%s", m.Name, ns, name)
	require.NotEmpty(t, si.Spec.Ports)
	return si.Spec.Ports[0].Port
}

// rollouts is status/rollouts.yaml on the remote's branch.
func rollouts(t *testing.T, w *world) *rollout.State {
	t.Helper()
	head, _ := w.remoteHead()
	out, err := exec.Command("git", "-C", w.remote, "show", head+":"+layout.RolloutsFile).Output()
	if err != nil {
		return &rollout.State{}
	}
	st, err := rollout.Parse(out)
	require.NoError(t, err)
	return st
}

// pushRolloutRequest is a person setting a rollout's request in
// status/rollouts.yaml and pushing it, with the git binary.
func pushRolloutRequest(t *testing.T, remote, service string, req rollout.Request) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=ops", "-c", "user.email=ops@example.com"}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	run("clone", "-q", "-b", "main", remote, ".")
	file := filepath.Join(dir, layout.RolloutsFile)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	st, err := rollout.Parse(data)
	require.NoError(t, err)
	r := st.Find(service)
	require.NotNil(t, r, "no rollout of %s", service)
	r.Request = req
	b, err := rollout.Format(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o644))
	run("commit", "-q", "-am", string(req)+" the rollout of "+service)
	run("push", "-q", "origin", "main")
}

// TestReviewApprovesARolloutOnce: with review mode on, a new export's
// proposal carries the whole plan of waves in its body and its first
// wave in its tree; merging it approves every wave: the first lands with
// the merge, the next once the first has soaked, with no other request.
func TestReviewApprovesARolloutOnce(t *testing.T) {
	rw := newGiteaWorld(t, true, "  rollout:\n    waves:\n    - name: first\n      members: {names: [cluster-2]}\n      soak: 1h\n", "")
	ck := &clock{}
	rw.loop.Now = ck.now
	rw.start()
	c1, c2, c3 := rw.member("cluster-1"), rw.member("cluster-2"), rw.member("cluster-3")

	export(t, c1, "demo", "web", 80, "10.1.0.10")
	rw.sync()
	open := rw.pulls("open")
	require.Len(t, open, 1)
	body := open[0].Body
	assert.Contains(t, body, "### Staged rollout (spec.rollout)")
	assert.Contains(t, body, "- `demo/web` (Import, Exporter):\n  1. first: cluster-2, soak 1h0m0s\n  2. rest: cluster-1, cluster-3\n")
	for _, m := range rw.members {
		assert.False(t, imported(m, "demo", "web"), "%s: nothing before the merge", m.Name)
	}

	rw.approve("web")
	assert.True(t, imported(c2, "demo", "web"), "the first wave lands with the merge")
	assert.False(t, imported(c3, "demo", "web"), "the rest wait for the soak")
	assert.False(t, imported(c1, "demo", "web"))
	assert.Len(t, rw.pulls("open"), 0, "the waves need no other request")

	ck.advance(time.Hour + time.Minute)
	rw.sync()
	assert.True(t, imported(c3, "demo", "web"), "the next wave once the first soaked")
	assert.True(t, imported(c1, "demo", "web"))
	assert.Len(t, rw.pulls("open"), 0)
	head, err := rw.loop.Repo.Head()
	require.NoError(t, err)
	_, err = rw.loop.Repo.ReadFile(head, layout.RolloutsFile)
	assert.ErrorIs(t, err, fs.ErrNotExist, "the rollout is over")
}

// BenchmarkRolloutWave measures, under the controller (run), how long a
// staged rollout takes to move on once a wave's gates hold: from the
// moment the canary's ServiceImport has its ClusterSet IP (the last gate,
// as the member shows it) to the next wave's ServiceImport in cluster-3,
// less the soak (1 s). That is the loop noticing the gates after its
// apply, waking at the soak's end, rendering and committing the wave and
// applying it to cluster-3. Reported: wave-p50-ms and wave-max-ms over
// the samples, and the floor in the same run: from the export to the
// canary's import with its IP (first-p50-ms), the same work (one cycle
// that commits and applies a wave) started by a watch event instead of
// a gate.
func BenchmarkRolloutWave(b *testing.B) {
	const samples = 10
	const soak = time.Second
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(quietLog())
	w := newWorldWith(b, 3, func(i int) string {
		if i == 1 {
			return "    labels: {canary: \"yes\"}\n"
		}
		return ""
	}, "    minCommitInterval: \"0\"\n  rollout:\n    stage: [Import]\n    waves:\n    - name: canary\n      members: {matchLabels: {canary: \"yes\"}}\n      soak: 1s\n    - name: second\n      members: {names: [cluster-3]}\n")
	ctx := context.Background()
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	for _, m := range w.members {
		require.NoError(b, envtest.EnsureNamespaces(ctx, m.Client, "bench"))
	}
	w.loop.Log = benchLog(b)
	runLoop(b, w)
	waitFor := func(m *envtest.Cluster, name string, ips bool) time.Time {
		deadline := time.Now().Add(30 * time.Second)
		for {
			si := &mcsv1alpha1.ServiceImport{}
			if exists(m.Client, si, "bench", name) && (!ips || len(si.Spec.IPs) > 0) {
				return time.Now()
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s: no import of bench/%s after 30 s", m.Name, name)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	// The first export is the first commit's: nothing staged.
	export(b, c1, "bench", "warm-up", 80, "10.1.0.10")
	waitFor(c3, "warm-up", false)
	time.Sleep(3 * time.Second)
	var waves, firsts []time.Duration
	n := 0
	b.ResetTimer()
	for b.Loop() {
		for range samples {
			name := fmt.Sprintf("svc-%d", n)
			n++
			start := time.Now()
			export(b, c1, "bench", name, 80, "10.1.0.10")
			held := waitFor(c2, name, true)
			firsts = append(firsts, held.Sub(start))
			next := waitFor(c3, name, false)
			waves = append(waves, next.Sub(held)-soak)
		}
	}
	slices.Sort(waves)
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "first-p50-ms")
	b.ReportMetric(float64(waves[len(waves)/2].Microseconds())/1000, "wave-p50-ms")
	b.ReportMetric(float64(waves[len(waves)-1].Microseconds())/1000, "wave-max-ms")
	b.ReportMetric(0, "ns/op")
}

// TestRolloutDNSGate: with the DNS gate on, a wave moves on only once the
// service's ClusterSet name answers with its ServiceImport's IP through
// each member's DNS: while the canary's DNS cannot be asked the wave
// waits (it does not pause: nothing was refused); with a real CoreDNS
// serving the canary's ServiceImports it moves on.
func TestRolloutDNSGate(t *testing.T) {
	dns.Require(t)
	const waves = "  rollout:\n    waves:\n    - name: canary\n      members: {names: [cluster-2]}\n    dns:\n      servers: {cluster-2: \"%s\"}\n"
	w := newWorld(t, 3, fmt.Sprintf(waves, "127.0.0.1:9"))
	ctx := context.Background()
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	for _, m := range w.members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	}
	w.sync()
	export(t, c1, "shop", "web", 80, "10.1.0.20")
	w.loop.Members.Forget()
	out := w.sync()
	require.True(t, out.Committed)
	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "web"))
	for range 3 {
		out = w.sync()
		assert.False(t, out.Again, "no DNS answer: the wave waits")
		assert.True(t, out.WakeAt.IsZero())
	}
	assert.False(t, exists(c3.Client, &mcsv1alpha1.ServiceImport{}, "shop", "web"))
	st := rollouts(t, w)
	require.Len(t, st.Rollouts, 1)
	assert.Nil(t, st.Rollouts[0].Paused, "a gate that does not hold yet is no failure")

	// The canary's DNS: CoreDNS with the multicluster plugin on cluster-2.
	addr := dns.Start(t, c2.Config, "")
	data, err := os.ReadFile(w.config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(w.config, []byte(strings.Replace(string(data), "127.0.0.1:9", addr, 1)), 0o644))
	w.loop = w.newLoop(filepath.Join(t.TempDir(), "clone"))
	eventually(t, 30*time.Second, func() bool {
		w.sync()
		return exists(c3.Client, &mcsv1alpha1.ServiceImport{}, "shop", "web")
	}, "the next wave never came once the canary's DNS answered")
}
