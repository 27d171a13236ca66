// SPDX-License-Identifier: Apache-2.0

// Package tenant builds, for tests, the objects a workload owner and the
// endpoint slice controller put into a member cluster: a Namespace, a
// Service, its EndpointSlices and a ServiceExport. Tests in every package
// use it so that each states only what is odd about its Service.
//
// The builders give what the API server and the controller would hold
// after creation minus what the server assigns (cluster IPs, families,
// timestamps), so the same object can be created in an envtest member or
// put into a snapshot by hand. It must not import mcs-gitops packages: the
// renderer's own tests import it.
package tenant

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// EndpointSliceController is the managed-by value of slices the
// in-cluster endpoint slice controller writes.
const EndpointSliceController = "endpointslice-controller.k8s.io"

// Namespace is an empty namespace.
func Namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// HTTP is the port most tests need: http 80/TCP to the pods' 8080.
func HTTP() corev1.ServicePort { return Port("http", 80, 8080) }

// Port is a TCP port forwarding to target on the pods; a target of 0
// leaves targetPort unset, which the API server defaults to port.
func Port(name string, port, target int32) corev1.ServicePort {
	p := corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
	if target != 0 {
		p.TargetPort = intstr.FromInt32(target)
	}
	return p
}

// Service is a ClusterIP Service selecting the pods labelled app=name,
// with ports, or HTTP when none are given.
func Service(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{HTTP()}
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    ports,
		},
	}
}

// Headless is Service with clusterIP None, like a StatefulSet's
// governing Service.
func Headless(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	s := Service(ns, name, ports...)
	s.Spec.ClusterIP = corev1.ClusterIPNone
	return s
}

// Export is the ServiceExport for ns/name.
func Export(ns, name string) *mcsv1alpha1.ServiceExport {
	return &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// Slice is an EndpointSlice of svc named name, as the endpoint slice
// controller writes it: labelled with the Service's name and the
// controller as manager, one port per Service port carrying the port the
// pods listen on (the numeric targetPort, or port when targetPort is
// unset).
func Slice(svc *corev1.Service, name string, family discoveryv1.AddressType, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	ports := make([]discoveryv1.EndpointPort, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		target := p.Port
		if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal != 0 {
			target = p.TargetPort.IntVal
		}
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		ports = append(ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(target), Protocol: ptr.To(protocol)})
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: svc.Name,
			discoveryv1.LabelManagedBy:   EndpointSliceController,
		}},
		AddressType: family,
		Ports:       ports,
		Endpoints:   endpoints,
	}
}

// Ready is one endpoint per address, each a pod that is ready.
func Ready(addresses ...string) []discoveryv1.Endpoint {
	return endpoints(addresses, true, true, false)
}

// NotReady is one endpoint per address, each a running pod that is not
// (yet) ready.
func NotReady(addresses ...string) []discoveryv1.Endpoint {
	return endpoints(addresses, false, false, false)
}

// Terminating is one endpoint per address, each a pod still serving while
// it shuts down: not ready, so it must not receive new traffic.
func Terminating(addresses ...string) []discoveryv1.Endpoint {
	return endpoints(addresses, false, true, true)
}

func endpoints(addresses []string, ready, serving, terminating bool) []discoveryv1.Endpoint {
	out := make([]discoveryv1.Endpoint, 0, len(addresses))
	for _, a := range addresses {
		out = append(out, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{
			Ready: ptr.To(ready), Serving: ptr.To(serving), Terminating: ptr.To(terminating),
		}})
	}
	return out
}
