// SPDX-License-Identifier: Apache-2.0

package dns_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// slice is an EndpointSlice as mcs-gitops renders it into an importing
// cluster: one source cluster per slice, port "http" 8080/TCP.
func slice(name, service, sourceCluster string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	labels := map[string]string{
		mcsv1alpha1.LabelServiceName:   service,
		discoveryv1.LabelServiceName:   "derived-" + service,
		discoveryv1.LabelManagedBy:     "mcs-gitops",
		"app.kubernetes.io/managed-by": "mcs-gitops",
		mcsv1alpha1.LabelSourceCluster: sourceCluster,
	}
	if sourceCluster == "" {
		delete(labels, mcsv1alpha1.LabelSourceCluster)
		labels[discoveryv1.LabelServiceName] = service
		labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
		delete(labels, "app.kubernetes.io/managed-by")
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports: []discoveryv1.EndpointPort{{
			Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080),
		}},
	}
}

func endpoint(ip string, ready *bool, hostname string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	if hostname != "" {
		e.Hostname = ptr.To(hostname)
	}
	return e
}

func mustGet(t *testing.T, c client.Client, name string, o client.Object) {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, o); err != nil {
		t.Fatalf("reading %T %s/%s: %v", o, ns, name, err)
	}
}
