// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// world is a ClusterSet of real apiservers, a bare Git remote on disk and
// a loop wired the way the sync command wires it.
type world struct {
	t       testing.TB
	members []*envtest.Cluster
	dir     string // holds clusterset.yaml and the kubeconfigs
	remote  string // bare repository
	config  string
	loop    *reconcile.Loop
}

// newWorld starts n members and writes a clusterset.yaml for them; extra
// is appended under spec (e.g. a sync: block).
func newWorld(t testing.TB, n int, extra string) *world {
	t.Helper()
	return newWorldWith(t, n, nil, extra)
}

// newWorldWith is newWorld with memberYAML(i) appended to the i-th
// member's entry (indented as its fields, e.g. a mode and gateway).
func newWorldWith(t testing.TB, n int, memberYAML func(i int) string, extra string) *world {
	t.Helper()
	stacks := make([]envtest.Stack, n)
	for i := range stacks {
		stacks[i] = envtest.DualStack
	}
	return newWorldStacks(t, stacks, memberYAML, extra)
}

// newWorldStacks is newWorldWith with one member per stack: a fleet that
// mixes IPv4-only, IPv6-only and dual-stack members.
func newWorldStacks(t testing.TB, stacks []envtest.Stack, memberYAML func(i int) string, extra string) *world {
	t.Helper()
	return newWorldOn(t, envtest.StartStacks(t, stacks...), memberYAML, extra)
}

// newWorldOn is newWorldWith on members already running (the lab's).
func newWorldOn(t testing.TB, members []*envtest.Cluster, memberYAML func(i int) string, extra string) *world {
	t.Helper()
	w := &world{t: t, members: members, dir: t.TempDir()}
	w.remote = filepath.Join(t.TempDir(), "remote.git")
	_, err := git.PlainInit(w.remote, true)
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: e2e\nspec:\n  members:\n")
	for i, m := range w.members {
		require.NoError(t, m.WriteKubeconfig(filepath.Join(w.dir, m.Name+".kubeconfig")))
		fmt.Fprintf(&b, "  - name: %s\n    kubeconfig:\n      path: %s.kubeconfig\n", m.Name, m.Name)
		if memberYAML != nil {
			b.WriteString(memberYAML(i))
		}
	}
	b.WriteString("  sync:\n    memberTimeout: 3s\n")
	b.WriteString(extra)
	w.config = filepath.Join(w.dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(w.config, []byte(b.String()), 0o644))
	w.loop = w.newLoop(filepath.Join(t.TempDir(), "clone"))
	return w
}

// newLoop builds a loop with its own clone of the remote in workdir, as a
// separate sync process would.
func (w *world) newLoop(workdir string) *reconcile.Loop {
	t := w.t
	data, err := os.ReadFile(w.config)
	require.NoError(t, err)
	cfg, err := v1alpha1.Parse(w.config, data)
	require.NoError(t, err)
	ctx := context.Background()
	log := loopLog(t)
	set := clusters.Connect(ctx, cfg, clusters.ConnectOptions{BaseDir: w.dir})
	repo, err := gitsync.Open(ctx, gitsync.Options{
		URL: w.remote, Branch: cfg.Spec.Git.Branch, Workdir: workdir,
		Author: gitsync.Signature{Name: cfg.Spec.Git.Author.Name, Email: cfg.Spec.Git.Author.Email}, Log: log,
	})
	require.NoError(t, err)
	return &reconcile.Loop{Config: cfg, ConfigBytes: data, Members: set, Repo: repo, Log: log}
}

// loopLog is where a loop and its repository log: the test's log, or in
// a benchmark MCS_BENCH_LOG (nothing when unset), where the repository's
// commits and pushes are then next to the loop's cycles.
func loopLog(t testing.TB) *slog.Logger {
	if b, ok := t.(*testing.B); ok {
		return benchLog(b)
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (w *world) member(name string) *envtest.Cluster {
	for _, m := range w.members {
		if m.Name == name {
			return m
		}
	}
	w.t.Fatalf("no member %s", name)
	return nil
}

func (w *world) sync() *reconcile.Outcome {
	w.t.Helper()
	out, err := w.loop.Sync(context.Background())
	require.NoError(w.t, err)
	return out
}

// remoteHead is the commit the remote's main branch points at.
func (w *world) remoteHead() (string, string) {
	w.t.Helper()
	r, err := git.PlainOpen(w.remote)
	require.NoError(w.t, err)
	ref, err := r.Reference("refs/heads/main", true)
	require.NoError(w.t, err)
	c, err := r.CommitObject(ref.Hash())
	require.NoError(w.t, err)
	return ref.Hash().String(), c.Message
}

// export creates namespace, Service, ServiceExport and one EndpointSlice
// with ready endpoints in member, as a workload owner and the endpoint
// slice controller would.
func export(t testing.TB, m *envtest.Cluster, ns, name string, port int32, addrs ...string) {
	t.Helper()
	require.NoError(t, envtest.EnsureNamespaces(context.Background(), m.Client, ns))
	svc := tenant.Service(ns, name, tenant.Port("http", port, 8080))
	svc.Labels = map[string]string{"app": name}
	tenant.Create(t, m.Client, svc,
		tenant.Slice(svc, name+"-"+m.Name, discoveryv1.AddressTypeIPv4, tenant.Ready(addrs...)...),
		tenant.Export(ns, name))
}

// unexport deletes the ServiceExport only; the Service stays.
func unexport(t testing.TB, m *envtest.Cluster, ns, name string) {
	t.Helper()
	err := m.Client.Delete(context.Background(), &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	require.NoError(t, client.IgnoreNotFound(err))
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(msg, args...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func exists(c client.Client, obj client.Object, ns, name string) bool {
	return c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj) == nil
}
