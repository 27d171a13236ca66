package e2e

import (
	"context"
	"testing"

	mdns "github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/test/dns"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
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
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, ns))
	require.NoError(t, m.Client.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}}},
	}))
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + m.Name,
			Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("pg"), Port: ptr.To[int32](5432), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for ip, ready := range endpoints {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}})
	}
	require.NoError(t, m.Client.Create(ctx, slice))
	require.NoError(t, m.Client.Create(ctx, &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
}
