// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestSyncLifecycle walks one ClusterSet through the story:
// export from two members, a no-op sync, a port conflict, unexport.
func TestSyncLifecycle(t *testing.T) {
	w := newWorld(t, 3, "")
	ctx := context.Background()
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	export(t, c1, "httpbin", "httpbin", 80, "10.1.0.10", "10.1.0.11")
	export(t, c3, "httpbin", "httpbin", 80, "10.3.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "httpbin"))

	out := w.sync()
	require.True(t, out.Committed)
	head, msg := w.remoteHead()
	assert.Equal(t, out.Commit.String(), head, "the commit is on the remote")
	assert.Contains(t, firstLineOf(msg), "httpbin/httpbin", "the subject names the import")
	assert.Contains(t, msg, "Snapshot-Digest: sha256:")
	assert.Positive(t, out.Took.Read, "the cycle says how long it read")
	assert.Positive(t, out.Took.Publish, "... published")
	assert.Positive(t, out.Took.Apply, "... and applied")
	for _, r := range out.Applied {
		assert.Positive(t, r.Took.Build, "%s: build timed", r.Member)
		assert.Positive(t, r.Took.Apply, "%s: server-side apply timed", r.Member)
		assert.Positive(t, r.Took.Status, "%s: status write-back timed", r.Member)
	}

	for _, m := range w.members {
		t.Run("imported in "+m.Name, func(t *testing.T) {
			var si mcsv1alpha1.ServiceImport
			require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: "httpbin"}, &si))
			assert.Equal(t, mcsv1alpha1.ClusterSetIP, si.Spec.Type)
			require.Len(t, si.Spec.Ports, 1)
			assert.Equal(t, int32(80), si.Spec.Ports[0].Port)
			assert.Equal(t, "http", si.Spec.Ports[0].Name)
			assert.NotEmpty(t, si.Spec.IPs, "spec.ips comes from the derived Service's cluster IP")
			assert.ElementsMatch(t, []mcsv1alpha1.ClusterStatus{{Cluster: "cluster-1"}, {Cluster: "cluster-3"}}, si.Status.Clusters)

			derived := si.Annotations["multicluster.kubernetes.io/derived-service"]
			var svc corev1.Service
			require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: derived}, &svc))
			assert.Equal(t, []string{svc.Spec.ClusterIP}, si.Spec.IPs[:1])

			var slices discoveryv1.EndpointSliceList
			require.NoError(t, m.Client.List(ctx, &slices, client.InNamespace("httpbin"),
				client.MatchingLabels{"multicluster.kubernetes.io/service-name": "httpbin"}))
			var sources []string
			for _, s := range slices.Items {
				sources = append(sources, s.Labels["multicluster.kubernetes.io/source-cluster"])
			}
			assert.ElementsMatch(t, []string{"cluster-1", "cluster-3"}, sources, "one slice per exporting member")
		})
	}
	for _, m := range []*envtest.Cluster{c1, c3} {
		assertExportConditions(t, m, "httpbin", "httpbin", map[string]string{"Valid": "True", "Conflict": "False", "Ready": "True"})
	}

	t.Run("no change, no commit, no write", func(t *testing.T) {
		before := resourceVersions(t, w.members)
		out := w.sync()
		assert.False(t, out.Committed)
		h, _ := w.remoteHead()
		assert.Equal(t, head, h)
		assert.Equal(t, before, resourceVersions(t, w.members), "an unchanged world changes no object")
	})

	t.Run("port conflict: oldest export wins, Conflict on both", func(t *testing.T) {
		var svc corev1.Service
		require.NoError(t, c3.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: "httpbin"}, &svc))
		svc.Spec.Ports[0].Port = 8000
		require.NoError(t, c3.Client.Update(ctx, &svc))
		out := w.sync()
		require.True(t, out.Committed)
		_, msg := w.remoteHead()
		assert.Contains(t, strings.ToLower(msg), "conflict")
		for _, m := range []*envtest.Cluster{c1, c3} {
			assertExportConditions(t, m, "httpbin", "httpbin", map[string]string{"Conflict": "True"})
		}
		var si mcsv1alpha1.ServiceImport
		require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: "httpbin"}, &si))
		assert.Equal(t, int32(80), si.Spec.Ports[0].Port, "cluster-1's export is older and wins")
		status, err := w.loop.Repo.ReadFile(out.Commit, "status/httpbin/httpbin.yaml")
		require.NoError(t, err)
		assert.Contains(t, string(status), "Conflict")
	})

	t.Run("unexport removes the import everywhere", func(t *testing.T) {
		unexport(t, c1, "httpbin", "httpbin")
		unexport(t, c3, "httpbin", "httpbin")
		out := w.sync()
		require.True(t, out.Committed)
		for _, m := range w.members {
			assert.False(t, exists(m.Client, &mcsv1alpha1.ServiceImport{}, "httpbin", "httpbin"), "%s still has the ServiceImport", m.Name)
			var slices discoveryv1.EndpointSliceList
			require.NoError(t, m.Client.List(ctx, &slices, client.InNamespace("httpbin"),
				client.MatchingLabels{"app.kubernetes.io/managed-by": "mcs-gitops"}))
			assert.Empty(t, slices.Items, "%s keeps imported slices", m.Name)
			var svcs corev1.ServiceList
			require.NoError(t, m.Client.List(ctx, &svcs, client.InNamespace("httpbin"),
				client.MatchingLabels{"app.kubernetes.io/managed-by": "mcs-gitops"}))
			assert.Empty(t, svcs.Items, "%s keeps the derived Service", m.Name)
			var own corev1.Service
			if m != c2 {
				assert.NoError(t, m.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: "httpbin"}, &own), "the user's Service is never pruned")
			}
		}
	})
}

// TestSyncWithMemberDown: a member whose apiserver is gone does not stop
// the others, the exit says which member, and its exports stay imported.
// A cycle whose change did not reach a member leaves it alone (nothing
// built, compared or sent), while the members it reached are applied; a
// member whose last apply was refused something is applied again; once
// the memory lapses (resyncInterval), everyone is applied.
func TestSyncLeavesAloneWhatAChangeDidNotReach(t *testing.T) {
	w := newWorld(t, 3, "    resyncInterval: 3s\n")
	ctx := context.Background()
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	// shop exists in cluster-1 and cluster-2 only: cluster-3 imports
	// nothing of it.
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	export(t, c3, "httpbin", "httpbin", 80, "10.3.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c1.Client, "httpbin"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "httpbin"))

	settled := func(out *reconcile.Outcome) map[string]bool {
		got := map[string]bool{}
		for _, r := range out.Applied {
			require.NoError(t, r.Err, r.Member)
			got[r.Member] = r.Settled
		}
		require.Len(t, got, 3)
		return got
	}
	out := w.sync()
	require.True(t, out.Committed)
	require.Equal(t, map[string]bool{"cluster-1": false, "cluster-2": false, "cluster-3": false}, settled(out), "the first apply")
	require.Equal(t, map[string]bool{"cluster-1": true, "cluster-2": true, "cluster-3": true}, settled(w.sync()), "nothing changed")

	var sl discoveryv1.EndpointSlice
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart-cluster-1"}, &sl))
	sl.Endpoints[0].Addresses = []string{"10.1.0.99"}
	require.NoError(t, c1.Client.Update(ctx, &sl))
	out = w.sync()
	require.True(t, out.Committed)
	require.Equal(t, map[string]bool{"cluster-1": false, "cluster-2": false, "cluster-3": true}, settled(out),
		"an endpoint of shop/cart moved: cluster-3 imports nothing of it")
	eventually(t, 10*time.Second, func() bool {
		var list discoveryv1.EndpointSliceList
		if err := c2.Client.List(ctx, &list, client.InNamespace("shop"), client.MatchingLabels{mcsv1alpha1.LabelSourceCluster: "cluster-1"}); err != nil {
			return false
		}
		for _, s := range list.Items {
			if len(s.Endpoints) > 0 && slices.Contains(s.Endpoints[0].Addresses, "10.1.0.99") {
				return true
			}
		}
		return false
	}, "the moved endpoint did not reach cluster-2")

	time.Sleep(3100 * time.Millisecond) // past resyncInterval: the memory lapses
	require.Equal(t, map[string]bool{"cluster-1": false, "cluster-2": false, "cluster-3": false}, settled(w.sync()), "after the resync interval")
}

func TestSyncWithMemberDown(t *testing.T) {
	w := newWorld(t, 3, "")
	ctx := context.Background()
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	export(t, c2, "db", "postgres", 5432, "10.2.0.5")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c1.Client, "db"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, c3.Client, "db"))
	w.sync()

	require.NoError(t, c2.StopAPIServer())
	export(t, c1, "web", "frontend", 80, "10.1.0.20")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c3.Client, "web"))
	out, err := w.loop.Sync(ctx)
	var partial *reconcile.PartialError
	require.True(t, errors.As(err, &partial), "want a PartialError, got %v", err)
	assert.Contains(t, err.Error(), "cluster-2")
	require.True(t, out.Committed, "the others' change still commits")
	_, msg := w.remoteHead()
	assert.Contains(t, msg, "cluster-2")
	for _, m := range []*envtest.Cluster{c1, c3} {
		assert.True(t, exists(m.Client, &mcsv1alpha1.ServiceImport{}, "db", "postgres"), "%s lost cluster-2's export", m.Name)
	}
	assert.True(t, exists(c3.Client, &mcsv1alpha1.ServiceImport{}, "web", "frontend"), "cluster-1's new export reached cluster-3")
	health, err := w.loop.Repo.ReadFile(out.Commit, layout.HealthFile)
	require.NoError(t, err)
	assert.Contains(t, string(health), "unreachableSince")
}

// TestSyncConcurrentPush: another writer pushes after this process's clone
// was made; the push is rejected and the retry lands a correct commit on
// top of the other one.
func TestSyncConcurrentPush(t *testing.T) {
	w := newWorld(t, 2, "")
	ctx := context.Background()
	export(t, w.member("cluster-1"), "httpbin", "httpbin", 80, "10.1.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, w.member("cluster-2").Client, "httpbin"))
	w.sync()

	// A second process (its own clone) commits a change first.
	other := w.newLoop(t.TempDir() + "/other")
	export(t, w.member("cluster-2"), "web", "frontend", 80, "10.2.0.20")
	first, err := other.Sync(ctx)
	require.NoError(t, err)
	require.True(t, first.Committed)

	// This process's clone is now behind; its push is rejected and retried.
	export(t, w.member("cluster-1"), "shop", "cart", 80, "10.1.0.30")
	out := w.sync()
	require.True(t, out.Committed)
	head, _ := w.remoteHead()
	assert.Equal(t, out.Commit.String(), head)
	commit, err := w.loop.Repo.ReadFile(out.Commit, "status/web/frontend.yaml")
	require.NoError(t, err, "the retried commit is on top of the other writer's")
	assert.NotEmpty(t, commit)
	_, err = w.loop.Repo.ReadFile(out.Commit, "status/shop/cart.yaml")
	require.NoError(t, err)
}

func assertExportConditions(t *testing.T, m *envtest.Cluster, ns, name string, want map[string]string) {
	t.Helper()
	var se mcsv1alpha1.ServiceExport
	require.NoError(t, m.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &se))
	got := map[string]string{}
	for _, c := range se.Status.Conditions {
		got[string(c.Type)] = string(c.Status)
		assert.False(t, c.LastTransitionTime.IsZero(), "%s: condition %s has no lastTransitionTime", m.Name, c.Type)
	}
	for k, v := range want {
		assert.Equal(t, v, got[k], "%s: ServiceExport %s/%s condition %s (all: %v)", m.Name, ns, name, k, got)
	}
}

// resourceVersions of every object mcs-gitops manages or writes status to.
func resourceVersions(t testing.TB, members []*envtest.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	kinds := []schema.GroupVersionKind{
		{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceImportList"},
		{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceExportList"},
		{Version: "v1", Kind: "ServiceList"},
		{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSliceList"},
	}
	for _, m := range members {
		for _, gvk := range kinds {
			var l unstructured.UnstructuredList
			l.SetGroupVersionKind(gvk)
			require.NoError(t, m.Client.List(context.Background(), &l))
			for _, o := range l.Items {
				out[m.Name+"/"+gvk.Kind+"/"+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
			}
		}
	}
	return out
}

func firstLineOf(s string) string {
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return s
	}
	return s[:i]
}
