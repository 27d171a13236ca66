// SPDX-License-Identifier: Apache-2.0

package dns_test

import (
	"context"
	"testing"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/mcs-gitops/mcs-gitops/test/dns"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

const ns = "httpbin"

// TestMulticlusterNames checks what CoreDNS v1.15's kubernetes plugin, with
// `multicluster clusterset.local`, serves from the objects mcs-gitops applies
// in an importing cluster: a ClusterSetIP ServiceImport's spec.ips and named
// ports, a headless ServiceImport's ready endpoints from EndpointSlices
// labelled multicluster.kubernetes.io/service-name, and changes to both.
func TestMulticlusterNames(t *testing.T) {
	dns.Require(t) // before the apiserver: a skip should cost nothing
	ctx := context.Background()
	cluster := envtest.Start(t, 1)[0]
	c := cluster.Client

	tenant.Create(t, c,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&mcsv1alpha1.ServiceImport{
			ObjectMeta: metav1.ObjectMeta{Name: "httpbin", Namespace: ns},
			Spec: mcsv1alpha1.ServiceImportSpec{
				Type: mcsv1alpha1.ClusterSetIP,
				IPs:  []string{"10.96.0.42", "fd00:10:96::2a"},
				Ports: []mcsv1alpha1.ServicePort{
					{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
					{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
				},
			},
		},
		&mcsv1alpha1.ServiceImport{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: mcsv1alpha1.ServiceImportSpec{
				Type:  mcsv1alpha1.Headless,
				Ports: []mcsv1alpha1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080}},
			},
		},
		slice("web-cluster-1", "web", "cluster-1",
			endpoint("10.1.0.1", ptr.To(true), "web-0"),
			endpoint("10.1.0.2", ptr.To(false), ""),
			endpoint("10.1.0.3", nil, ""), // unknown readiness counts as ready
		),
		slice("web-cluster-2", "web", "cluster-2",
			endpoint("10.2.0.1", ptr.To(true), ""),
			tenant.Terminating("10.2.0.2")[0],
		),
	)
	// A slice of the cluster's own Service "web" without the multicluster
	// label: the plugin's multicluster view must not see it.
	local := slice("web-local", "web", "", endpoint("10.9.9.9", ptr.To(true), ""))
	delete(local.Labels, mcsv1alpha1.LabelServiceName)
	tenant.Create(t, c, local)

	addr := dns.Start(t, cluster.Config, dns.ClusterSetZone)

	const (
		httpbin = "httpbin.httpbin.svc.clusterset.local."
		web     = "web.httpbin.svc.clusterset.local."
	)
	t.Run("ClusterSetIP", func(t *testing.T) {
		dns.Await(t, addr, httpbin, mdns.TypeA, "10.96.0.42")
		dns.Await(t, addr, httpbin, mdns.TypeAAAA, "fd00:10:96::2a")
		dns.Await(t, addr, "_http._tcp."+httpbin, mdns.TypeSRV, "80 "+httpbin)
		dns.Await(t, addr, "_dns._udp."+httpbin, mdns.TypeSRV, "53 "+httpbin)
		// The protocol is part of the match: there is no TCP port "dns".
		dns.Await(t, addr, "_dns._tcp."+httpbin, mdns.TypeSRV)
		dns.AwaitRcode(t, addr, "nope.httpbin.svc.clusterset.local.", mdns.TypeA, mdns.RcodeNameError)
	})

	t.Run("HeadlessReadyEndpointsOnly", func(t *testing.T) {
		dns.Await(t, addr, web, mdns.TypeA, "10.1.0.1", "10.1.0.3", "10.2.0.1")
		// Per-endpoint names: <hostname or dashed IP>.<source cluster>.<svc>...
		dns.Await(t, addr, "web-0.cluster-1."+web, mdns.TypeA, "10.1.0.1")
		dns.Await(t, addr, "10-2-0-1.cluster-2."+web, mdns.TypeA, "10.2.0.1")
		dns.AwaitRcode(t, addr, "10-1-0-2.cluster-1."+web, mdns.TypeA, mdns.RcodeNameError)
		dns.Await(t, addr, "_http._tcp."+web, mdns.TypeSRV,
			"8080 web-0.cluster-1."+web,
			"8080 10-1-0-3.cluster-1."+web,
			"8080 10-2-0-1.cluster-2."+web)
	})

	t.Run("FollowsChanges", func(t *testing.T) {
		// An endpoint becoming ready appears without restarting CoreDNS.
		s := &discoveryv1.EndpointSlice{}
		mustGet(t, c, "web-cluster-1", s)
		s.Endpoints[1].Conditions.Ready = ptr.To(true)
		if err := c.Update(ctx, s); err != nil {
			t.Fatalf("marking 10.1.0.2 ready: %v", err)
		}
		dns.Await(t, addr, web, mdns.TypeA, "10.1.0.1", "10.1.0.2", "10.1.0.3", "10.2.0.1")

		// New spec.ips are served at once.
		si := &mcsv1alpha1.ServiceImport{}
		mustGet(t, c, "httpbin", si)
		si.Spec.IPs = []string{"10.96.0.43"}
		if err := c.Update(ctx, si); err != nil {
			t.Fatalf("changing spec.ips: %v", err)
		}
		dns.Await(t, addr, httpbin, mdns.TypeA, "10.96.0.43")
		dns.Await(t, addr, httpbin, mdns.TypeAAAA)

		// A removed import stops resolving.
		if err := c.Delete(ctx, si); err != nil {
			t.Fatalf("deleting ServiceImport: %v", err)
		}
		dns.AwaitRcode(t, addr, httpbin, mdns.TypeA, mdns.RcodeNameError)
	})

	t.Run("V1beta1ImportServed", func(t *testing.T) {
		// The CRD stores v1beta1 and serves both versions without a
		// conversion webhook; CoreDNS reads v1alpha1, so an import written as
		// v1beta1 (render can emit it) must resolve the same way.
		tenant.Create(t, c, &mcsv1beta1.ServiceImport{
			ObjectMeta: metav1.ObjectMeta{Name: "beta", Namespace: ns},
			Spec: mcsv1beta1.ServiceImportSpec{
				Type:  mcsv1beta1.ClusterSetIP,
				IPs:   []string{"10.96.0.50"},
				Ports: []mcsv1beta1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
			},
		})
		dns.Await(t, addr, "beta.httpbin.svc.clusterset.local.", mdns.TypeA, "10.96.0.50")
		dns.Await(t, addr, "_http._tcp.beta.httpbin.svc.clusterset.local.", mdns.TypeSRV,
			"80 beta.httpbin.svc.clusterset.local.")
	})
}
