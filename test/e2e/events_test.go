// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// eventsOf lists the events.k8s.io Events of kind/name in namespace ns of
// m, as "Type Reason: note".
func eventsOf(t *testing.T, m *envtest.Cluster, ns, kind, name string) []string {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, m.Client.List(context.Background(), &list, client.InNamespace(ns)))
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			assert.NotEmpty(t, e.Regarding.UID, "kubectl describe matches events by UID")
			assert.Equal(t, "mcs-gitops", e.ReportingController)
			out = append(out, fmt.Sprintf("%s %s: %s", e.Type, e.Reason, e.Note))
		}
	}
	slices.Sort(out)
	return out
}

// TestEventsTellTheStory: an export, the imports it makes and a conflict
// each leave Events on the object in its member, naming the commit; a
// cycle that changes nothing emits none.
func TestEventsTellTheStory(t *testing.T) {
	w := newWorld(t, 2, "")
	w.loop.Events = true
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	out := w.sync()
	w.loop.CloseEvents(10 * time.Second)
	commit := out.Commit.String()[:12]
	assert.ElementsMatch(t, []string{
		"Normal Exported: exported to the ClusterSet (commit " + commit + ")",
		"Normal ReachChanged: now reachable from cluster-2 (commit " + commit + ")",
	}, eventsOf(t, c1, "shop", "ServiceExport", "cart"), "the owner hears who now reaches it (the change model)")
	assert.Equal(t, []string{"Normal Imported: imported from cluster-1 (commit " + commit + ")"},
		eventsOf(t, c2, "shop", "ServiceImport", "cart"))

	// Nothing changes: no new Event.
	w.sync()
	w.loop.CloseEvents(10 * time.Second)
	assert.Len(t, eventsOf(t, c1, "shop", "ServiceExport", "cart"), 2)

	// cluster-2 exports the same service: the import's sources change.
	export(t, c2, "shop", "cart", 80, "10.2.0.10")
	out = w.sync()
	w.loop.CloseEvents(10 * time.Second)
	commit = out.Commit.String()[:12]
	assert.Contains(t, eventsOf(t, c2, "shop", "ServiceImport", "cart"),
		"Normal SourcesChanged: imported from cluster-1, cluster-2 (was cluster-1) (commit "+commit+")")

	// cluster-2 moves its port: a conflict its export loses; it then
	// serves nothing, so the import's sources are cluster-1 alone again.
	var svc corev1.Service
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &svc))
	svc.Spec.Ports[0].Port = 8000
	require.NoError(t, c2.Client.Update(ctx, &svc))
	out = w.sync()
	w.loop.CloseEvents(10 * time.Second)
	commit = out.Commit.String()[:12]
	got := eventsOf(t, c2, "shop", "ServiceExport", "cart")
	require.NotEmpty(t, got)
	assert.Regexp(t, `^Warning Conflict: .*8000.* \(commit `+commit+`\)$`, got[len(got)-1])
	assert.Contains(t, eventsOf(t, c2, "shop", "ServiceImport", "cart"),
		"Normal SourcesChanged: imported from cluster-1 (was cluster-1, cluster-2) (commit "+commit+")")

	// cluster-1, whose export wins, moves its port too: every importer
	// hears how its import changed, old -> new (the change model).
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &svc))
	svc.Spec.Ports[0].Port = 8080
	require.NoError(t, c1.Client.Update(ctx, &svc))
	out = w.sync()
	w.loop.CloseEvents(10 * time.Second)
	commit = out.Commit.String()[:12]
	for _, m := range []*envtest.Cluster{c1, c2} {
		assert.Contains(t, eventsOf(t, m, "shop", "ServiceImport", "cart"),
			"Normal ImportChanged: port http 80/TCP -> 8080/TCP (commit "+commit+")", m.Name)
	}
}
