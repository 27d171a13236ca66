// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fluxcd/pkg/ssa"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	mdns "github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/dns"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// fluxApply applies the member's directory of the remote's last commit as
// Flux's kustomize-controller does: kustomize build of a checkout, then
// Flux ssa with its field manager and owner labels. It returns what it did
// to each object.
func fluxApply(t *testing.T, w *world, m *envtest.Cluster) map[string]ssa.Action {
	t.Helper()
	dir := t.TempDir()
	_, err := git.PlainClone(dir, false, &git.CloneOptions{URL: w.remote, ReferenceName: plumbing.NewBranchReferenceName("main"), SingleBranch: true})
	require.NoError(t, err)
	var objs []*unstructured.Unstructured
	for _, o := range build(t, filepath.Join(dir, "clusters", m.Name)) {
		// A JSON round trip, as kustomize-controller decodes its build:
		// kustomize's maps hold int, which DeepCopy refuses.
		data, err := o.MarshalJSON()
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(data))
		objs = append(objs, u)
	}
	mgr := ssa.NewResourceManager(m.Client, nil, ssa.Owner{Field: "kustomize-controller", Group: "kustomize.toolkit.fluxcd.io"})
	cs, err := mgr.ApplyAllStaged(context.Background(), objs, ssa.DefaultApplyOptions())
	require.NoError(t, err)
	out := map[string]ssa.Action{}
	for _, e := range cs.Entries {
		out[e.Subject] = e.Action
	}
	return out
}

// TestRenderOnlyWithFlux: with --apply=none a cycle commits and touches no
// member; with --apply=status-only it writes only what mcs-gitops alone
// can (spec.ips from the derived Service, import and export status) on
// objects Flux applied. Flux's next apply neither reverts the IPs nor
// sees drift, and CoreDNS answers the name.
func TestRenderOnlyWithFlux(t *testing.T) {
	w := newWorld(t, 2, "")
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))

	w.loop.Apply = reconcile.ApplyNone
	out := w.sync()
	assert.True(t, out.Committed)
	assert.Empty(t, out.Applied)
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "none: nothing applied")
	var se mcsv1alpha1.ServiceExport
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &se))
	assert.Empty(t, se.Status.Conditions, "none: no status written")

	// status-only before Flux applied: nothing is created, the cycle is fine.
	w.loop.Apply = reconcile.ApplyStatusOnly
	out = w.sync()
	assert.Empty(t, out.FailedMembers())
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "status-only creates nothing")

	actions := fluxApply(t, w, c2)
	assert.Equal(t, ssa.CreatedAction, actions["ServiceImport/shop/cart"], "%v", actions)
	si := &mcsv1alpha1.ServiceImport{}
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, si))
	assert.Empty(t, si.Spec.IPs, "Flux alone leaves the import without IPs")

	w.loop.Members.Forget()
	out = w.sync()
	assert.Empty(t, out.FailedMembers())
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, si))
	svc := &corev1.Service{}
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: render.DerivedServiceName("shop", "cart")}, svc))
	assert.Equal(t, svc.Spec.ClusterIPs, si.Spec.IPs, "the status writer copied the derived Service's IPs")
	assert.NotEmpty(t, si.Status.Clusters, "and the import's status")
	assertExportConditions(t, c1, "shop", "cart", map[string]string{"Valid": "True", "Conflict": "False"})
	managers := map[string]bool{}
	for _, f := range si.ManagedFields {
		managers[f.Manager] = true
	}
	assert.True(t, managers["kustomize-controller"] && managers[apply.IPsFieldManager], "managers: %v", managers)
	assert.False(t, managers[envtest.FieldManager], "status-only never applies the import itself")

	// Flux again: no drift, the IPs stay.
	actions = fluxApply(t, w, c2)
	assert.Equal(t, ssa.UnchangedAction, actions["ServiceImport/shop/cart"], "%v", actions)
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, si))
	assert.Equal(t, svc.Spec.ClusterIPs, si.Spec.IPs)

	addr := dns.Start(t, c2.Config, dns.ClusterSetZone)
	dns.Await(t, addr, "cart.shop.svc.clusterset.local.", mdns.TypeA, svc.Spec.ClusterIPs[0])
}
