// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"testing"

	mdns "github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/test/dns"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// TestSyncResolvesInCoreDNS: after one sync, real CoreDNS pointed at
// member 2 answers the clusterset names from what the loop applied there.
func TestSyncResolvesInCoreDNS(t *testing.T) {
	dns.Require(t)
	w := newWorld(t, 3, "")
	ctx := context.Background()
	c1, c2, c3 := w.member("cluster-1"), w.member("cluster-2"), w.member("cluster-3")
	export(t, c1, "httpbin", "httpbin", 80, "10.1.0.10")
	export(t, c3, "httpbin", "httpbin", 80, "10.3.0.10")
	exportHeadless(t, c3, "db", "postgres", map[string]bool{"10.3.1.1": true, "10.3.1.2": false})
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "httpbin", "db"))
	w.sync()

	var si mcsv1alpha1.ServiceImport
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "httpbin", Name: "httpbin"}, &si))
	require.Len(t, si.Spec.IPs, 1)

	addr := dns.Start(t, c2.Config, "")
	dns.Await(t, addr, "httpbin.httpbin.svc.clusterset.local.", mdns.TypeA, si.Spec.IPs[0])
	dns.Await(t, addr, "_http._tcp.httpbin.httpbin.svc.clusterset.local.", mdns.TypeSRV, "80 httpbin.httpbin.svc.clusterset.local.")
	dns.Await(t, addr, "postgres.db.svc.clusterset.local.", mdns.TypeA, "10.3.1.1")
}

// exportHeadless exports a headless Service whose slice has the given
// endpoints, ready or not.
func exportHeadless(t *testing.T, m *envtest.Cluster, ns, name string, endpoints map[string]bool) {
	t.Helper()
	require.NoError(t, envtest.EnsureNamespaces(context.Background(), m.Client, ns))
	svc := tenant.Headless(ns, name, tenant.Port("pg", 5432, 0))
	slice := tenant.Slice(svc, name+"-"+m.Name, discoveryv1.AddressTypeIPv4)
	for ip, ready := range endpoints {
		if ready {
			slice.Endpoints = append(slice.Endpoints, tenant.Ready(ip)...)
		} else {
			slice.Endpoints = append(slice.Endpoints, tenant.NotReady(ip)...)
		}
	}
	tenant.Create(t, m.Client, svc, slice, tenant.Export(ns, name))
}
