// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// exportStack exports ns/name from m as a PreferDualStack Service, so it
// gets the member's own families, with one ready slice per family the
// apiserver gave it, the way the endpoint slice controller would.
func exportStack(t *testing.T, m *envtest.Cluster, ns, name string, podIPs map[discoveryv1.AddressType]string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, ns))
	svc := tenant.Service(ns, name)
	svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	// Created first: the families the slices follow are the ones the
	// member's apiserver gave it.
	tenant.Create(t, m.Client, svc)
	for _, fam := range svc.Spec.IPFamilies {
		at := discoveryv1.AddressType(fam)
		suffix := map[corev1.IPFamily]string{corev1.IPv4Protocol: "v4", corev1.IPv6Protocol: "v6"}[fam]
		tenant.Create(t, m.Client, tenant.Slice(svc, fmt.Sprintf("%s-%s-%s", name, m.Name, suffix), at, tenant.Ready(podIPs[at])...))
	}
	tenant.Create(t, m.Client, tenant.Export(ns, name))
}

// TestMixedIPFamilyFleet runs the loop on a fleet that mixes an IPv4-only,
// an IPv6-only and a dual-stack member, as real fleets do. Before derived
// Services stopped pinning two families, the single-stack members refused
// every dual-stack import and their whole apply failed.
func TestMixedIPFamilyFleet(t *testing.T) {
	stacks := []envtest.Stack{envtest.IPv4Only, envtest.IPv6Only, envtest.DualStack}
	w := newWorldStacks(t, stacks, nil, "  render:\n    serviceImportAPIVersion: v1beta1\n")
	v4, v6, dual := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	pods := map[discoveryv1.AddressType]string{discoveryv1.AddressTypeIPv4: "10.244.3.10", discoveryv1.AddressTypeIPv6: "fd00:244:3::10"}
	// search: dual-stack, from the dual-stack member only.
	exportStack(t, dual, "shop", "search", pods)
	// cart: the IPv6-only member's export is older and wins over the
	// dual-stack member's, so the import is IPv6 only.
	exportStack(t, v6, "shop", "cart", map[discoveryv1.AddressType]string{discoveryv1.AddressTypeIPv6: "fd00:244:2::10"})
	exportStack(t, dual, "shop", "cart", pods)
	require.NoError(t, envtest.EnsureNamespaces(context.Background(), v4.Client, "shop"))

	out := w.sync()
	require.Empty(t, out.FailedMembers(), "every member takes what is rendered for it")

	ctx := context.Background()
	wantSearch := map[string][]corev1.IPFamily{
		"cluster-1": {corev1.IPv4Protocol}, "cluster-2": {corev1.IPv6Protocol}, "cluster-3": {corev1.IPv4Protocol, corev1.IPv6Protocol},
	}
	for _, m := range w.members {
		si := &mcsv1beta1.ServiceImport{}
		require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "search"}, si), m.Name)
		assert.Equal(t, wantSearch[m.Name], si.Spec.IPFamilies, "%s: the import lists the families the member serves", m.Name)
		require.Len(t, si.Spec.IPs, len(si.Spec.IPFamilies), "%s: one IP per family", m.Name)
		for i, ip := range si.Spec.IPs {
			a := netip.MustParseAddr(ip)
			assert.Equal(t, si.Spec.IPFamilies[i] == corev1.IPv4Protocol, a.Is4(), "%s: ips[%d] %s is of family %s", m.Name, i, ip, si.Spec.IPFamilies[i])
		}
		var slices discoveryv1.EndpointSliceList
		require.NoError(t, m.Client.List(ctx, &slices, client.InNamespace("shop"),
			client.MatchingLabels{discoveryv1.LabelServiceName: render.DerivedServiceName("shop", "search")}))
		var fams []corev1.IPFamily
		for _, sl := range slices.Items {
			fams = append(fams, corev1.IPFamily(sl.AddressType))
		}
		assert.ElementsMatch(t, wantSearch[m.Name], fams, "%s: slices only in the member's families", m.Name)
	}

	// cart is IPv6: the IPv4-only member gets the import, with a Ready=False
	// condition saying why, and no derived Service.
	si := &mcsv1beta1.ServiceImport{}
	require.NoError(t, v4.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, si))
	assert.Equal(t, []corev1.IPFamily{corev1.IPv6Protocol}, si.Spec.IPFamilies)
	assert.Empty(t, si.Spec.IPs)
	require.Len(t, si.Status.Conditions, 1)
	assert.Equal(t, "False", string(si.Status.Conditions[0].Status))
	assert.Equal(t, render.ReasonIPFamilyNotSupported, si.Status.Conditions[0].Reason)
	assert.False(t, exists(v4.Client, &corev1.Service{}, "shop", render.DerivedServiceName("shop", "cart")), "no derived Service in a family the member lacks")
	for _, m := range []*envtest.Cluster{v6, dual} {
		svc := &corev1.Service{}
		require.True(t, exists(m.Client, svc, "shop", render.DerivedServiceName("shop", "cart")), m.Name)
		assert.Equal(t, []corev1.IPFamily{corev1.IPv6Protocol}, svc.Spec.IPFamilies, m.Name)
	}
	for _, s := range out.Report.Services {
		if s.Name == "cart" {
			require.Len(t, s.NotServed, 1)
			assert.Equal(t, "cluster-1", s.NotServed[0].Member)
			assert.Equal(t, "True", conflictStatus(s, "cluster-3"), "the dual-stack export loses on ipFamilies")
		}
	}

	// A second sync changes nothing.
	again := w.sync()
	assert.False(t, again.Committed)
	require.Empty(t, again.FailedMembers())
}

func conflictStatus(s render.ServiceReport, member string) string {
	for _, e := range s.Exports {
		if e.Member == member {
			c, _ := e.Condition("Conflict")
			return c.Status
		}
	}
	return ""
}
