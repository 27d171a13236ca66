// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestSnapshotAcceptsWhatTheAPIServerAccepts creates odd but possible
// Services and EndpointSlices in a real kube-apiserver and checks that each
// one it accepts also loads as a snapshot: a tenant's valid object must
// never make a cycle fail. Candidates the apiserver refuses are skipped, so
// the test follows the apiserver's rules, not a copy of them.
func TestSnapshotAcceptsWhatTheAPIServerAccepts(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, c.Client, "odd"))
	svc := func(name string, ports ...corev1.ServicePort) client.Object {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "odd"}, Spec: corev1.ServiceSpec{Ports: ports}}
	}
	port := func(name string, n int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: n, Protocol: corev1.ProtocolTCP}
	}
	slice := func(name string, edit func(*discoveryv1.EndpointSlice)) client.Object {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "odd",
			Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}}
		edit(s)
		return s
	}
	candidates := []client.Object{
		svc("numeric-port-names", port("443", 443), port("80", 80)),
		svc("range-like-port-name", port("81-81", 81), port("a--b", 82)),
		svc("long-port-name", port("a23456789012345678901234567890123456789012345678901234567890123", 83)),
		svc("dotted-port-name", port("a.b", 84), port("c", 85)), // refused: not a DNS label
		svc("upper-port-name", port("Web", 86), port("c", 87)),  // refused
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "session-affinity-max", Namespace: "odd"}, Spec: corev1.ServiceSpec{
			Ports:                 []corev1.ServicePort{port("", 80)},
			SessionAffinity:       corev1.ServiceAffinityClientIP,
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](86400)}},
		}},
		slice("slice-port-names", func(s *discoveryv1.EndpointSlice) {
			s.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("81-81"), Port: ptr.To[int32](81), Protocol: ptr.To(corev1.ProtocolTCP)},
				{Name: ptr.To("443"), Port: ptr.To[int32](443), Protocol: ptr.To(corev1.ProtocolTCP)}}
		}),
		slice("slice-port-number-unchecked", func(s *discoveryv1.EndpointSlice) {
			s.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("x"), Port: ptr.To[int32](70000), Protocol: ptr.To(corev1.ProtocolTCP)}}
		}),
		slice("slice-zone-anything", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Zone = ptr.To("eu west/1 (b)") }),
		slice("slice-hostname", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Hostname = ptr.To("web-0") }),
		slice("slice-leading-zero", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"10.0.0.01"} }), // refused on 1.36
		slice("slice-many-addresses", func(s *discoveryv1.EndpointSlice) {
			for i := range 99 {
				s.Endpoints[0].Addresses = append(s.Endpoints[0].Addresses, fmt.Sprintf("10.0.1.%d", i+1))
			}
		}),
	}
	accepted := 0
	for _, o := range candidates {
		if err := c.Client.Create(ctx, o); err != nil {
			t.Logf("%s: refused by the apiserver, skipped: %v", o.GetName(), err)
			continue
		}
		accepted++
		require.NoError(t, c.Client.Get(ctx, client.ObjectKeyFromObject(o), o))
		gvks, _, err := envtest.Scheme().ObjectKinds(o)
		require.NoError(t, err)
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
		o.SetManagedFields(nil)
		b, err := json.Marshal(o)
		require.NoError(t, err)
		_, err = snapshot.Parse("m", o.GetName()+".json", b)
		require.NoError(t, err, "%s: the apiserver accepted it, so the snapshot must load it", o.GetName())
	}
	require.GreaterOrEqual(t, accepted, 8, "most candidates are valid; the apiserver must not refuse them all")
}
