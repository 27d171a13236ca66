// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestReachOnRealMembers: spec.reach shares namespace shop among the
// env=prod members only. On real members, the dev member gets nothing of
// the service and its own export of it is refused with the rule; the
// exporter is told who imports; the export's importers annotation then
// narrows the audience again, and the member it leaves out loses the
// import.
func TestReachOnRealMembers(t *testing.T) {
	labels := []string{"prod", "prod", "dev"}
	w := newWorldWith(t, 3, func(i int) string { return "    labels: {env: " + labels[i] + "}\n" },
		"  reach:\n    namespaces:\n    - name: shop\n      members: {matchLabels: {env: prod}}\n")
	ctx := context.Background()
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	for _, m := range w.members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	}
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	export(t, c3, "shop", "cart", 80, "10.3.0.10")
	require.Empty(t, w.sync().FailedMembers())

	derived := render.DerivedServiceName("shop", "cart")
	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "cluster-2 shares shop: imports")
	assert.False(t, exists(c3.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "cluster-3 does not share shop: no import")
	assert.False(t, exists(c3.Client, &corev1.Service{}, "shop", derived), "cluster-3: no derived Service")
	var slices discoveryv1.EndpointSliceList
	require.NoError(t, c2.Client.List(ctx, &slices, client.InNamespace("shop"), client.MatchingLabels{mcsv1alpha1.LabelServiceName: "cart"}))
	for _, s := range slices.Items {
		assert.NotEqual(t, "cluster-3", s.Labels[mcsv1alpha1.LabelSourceCluster], "cluster-3's endpoints are in no import")
	}
	assertExportConditions(t, c3, "shop", "cart", map[string]string{"Valid": "False", "Ready": "False"})
	_, reason, _ := exportCondition(t, c3, "shop", "cart", "Valid")
	assert.Equal(t, render.ReasonNamespaceNotShared, reason)
	_, _, ready := exportCondition(t, c1, "shop", "cart", "Ready")
	assert.Contains(t, ready, "imported by: cluster-1, cluster-2; out of reach: cluster-3 (spec.reach.namespaces[shop].members)")

	// The app narrows its audience: cluster-2 loses the import.
	var se mcsv1alpha1.ServiceExport
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &se))
	se.Annotations = map[string]string{render.ImportersAnnotation: "mcs-gitops.io/member=cluster-1"}
	require.NoError(t, c1.Client.Update(ctx, &se))
	w.loop.Members.Forget()
	require.Empty(t, w.sync().FailedMembers())
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "cluster-2 left out by the annotation: import pruned")
	assert.False(t, exists(c2.Client, &corev1.Service{}, "shop", derived), "and its derived Service")
	assert.True(t, exists(c1.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"))
	_, _, ready = exportCondition(t, c1, "shop", "cart", "Ready")
	assert.Contains(t, ready, "cluster-2 (the export's "+render.ImportersAnnotation+" annotation)")
}

// TestReviewHoldsAWiderReach: under review mode, a change of spec.reach
// that lets a member import a service is a structural change like any
// other: it waits in a proposal naming the import, and the member
// imports only once it is merged. (A narrower reach withdraws imports,
// which review mode never holds.)
func TestReviewHoldsAWiderReach(t *testing.T) {
	narrow := "  reach:\n    namespaces:\n    - name: demo\n      services:\n      - name: web\n        importers: {names: [cluster-1, cluster-2]}\n"
	rw := newGiteaWorld(t, true, narrow, "")
	rw.start()
	c1, c2, c3 := rw.member("cluster-1"), rw.member("cluster-2"), rw.member("cluster-3")
	export(t, c1, "demo", "web", 80, "10.1.0.10")
	rw.sync()
	rw.approve("web")
	require.True(t, imported(c2, "demo", "web"))
	require.False(t, imported(c3, "demo", "web"), "out of reach")

	data, err := os.ReadFile(rw.config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(rw.config, []byte(strings.Replace(string(data), narrow, "", 1)), 0o644))
	rw.loop = rw.newLoop(filepath.Join(t.TempDir(), "clone"))
	rw.sync()
	open := rw.pulls("open")
	require.Len(t, open, 1, "the wider reach is proposed")
	assert.Contains(t, open[0].Title, "cluster-3 imports demo/web")
	assert.False(t, imported(c3, "demo", "web"), "held until merged")

	rw.srv.Merge(t, rw.alice.Token, "fleet", open[0].Number)
	rw.sync()
	assert.True(t, imported(c3, "demo", "web"), "imported once merged")
}
