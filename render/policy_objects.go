// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

var (
	serviceKind   = gatewayv1.Kind("Service")
	coreGroup     = gatewayv1.Group("")
	httpRouteKind = gatewayv1.Kind("HTTPRoute")
)

// PerClusterServiceName names the selectorless Service that holds one
// source cluster's endpoints of a service, the backend a weighted route
// gives that cluster's share to.
func PerClusterServiceName(namespace, name, clusterID string) string {
	return "derived-" + shortHash(namespace+"/"+name+"/"+clusterID)
}

func weightedName(svc string) string { return svc + "-weighted" }

// httpPort is the service's port a weighted route carries: the lowest
// numbered HTTP port of the ServiceImport, judged like the exporting side
// judges it, with the winning export's annotation.
func (s *svc) httpPort() *mcsv1alpha1.ServicePort {
	ports := make([]corev1.ServicePort, len(s.mg.ports))
	for i, p := range s.mg.ports {
		ports[i] = corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol, Port: p.Port}
	}
	i := lowestHTTPPort(ports, s.mg.winner.se.Annotations[HTTPPortsAnnotation])
	if i < 0 {
		return nil
	}
	p := s.mg.ports[i]
	return &p
}

// weighted renders consumer c's weighted policy: a per-cluster Service
// for each source, and an HTTPRoute splitting the HTTP port among them by
// weight, attached to the derived Service when c runs a mesh, else to a
// listener of c's own gateway that the derived Service's HTTP port is
// pointed at. why says what made the weights inexpressible, in which case
// nothing is returned and the caller renders the sources unweighted.
func (s *svc) weighted(c *member, ch choice) (objs []Object, weights map[string]int32, why string) {
	hp := s.httpPort()
	var listener int32
	switch {
	case s.mg.importType == mcsv1alpha1.Headless:
		return nil, nil, "the service is headless: DNS hands out its endpoints directly and no route sits in between to weigh them"
	case hp == nil:
		return nil, nil, "the service has no HTTP port, and weights are carried by HTTP routes only"
	case !c.mesh && c.gw == nil:
		return nil, nil, fmt.Sprintf("member %s has neither a gateway nor a mesh to carry the weights (set spec.members[].gateway or mesh); endpoints are balanced per endpoint", c.name)
	case !c.mesh && c.gw.listenersInGateway:
		return nil, nil, fmt.Sprintf("member %s's gateway declares its listeners in the Gateway itself (tcpListeners: Gateway), and the weighted route's listener needs a ListenerSet; set mesh, or tcpListeners: ListenerSet with an implementation that has ListenerSet", c.name)
	case !c.mesh && len(c.gw.addresses) == 0:
		return nil, nil, fmt.Sprintf("gateway host %q of member %s has no resolved address", c.gw.host, c.name)
	case !c.mesh:
		p, ok := s.plan.weighted[c][s.ns+"/"+s.name]
		if !ok {
			if c.gw.tcp == nil {
				return nil, nil, fmt.Sprintf("the weighted route needs a listener port from the tcpPorts range of member %s's gateway, and it has none", c.name)
			}
			return nil, nil, fmt.Sprintf("the weighted route needs a listener port and the tcpPorts range %d-%d of member %s's gateway has none left", c.gw.tcp.From, c.gw.tcp.To, c.name)
		}
		listener = p
	}
	httpOnly := map[string]bool{hp.Name: true}
	weights = map[string]int32{}
	var backends []gatewayv1.HTTPBackendRef
	for _, e := range ch.sources {
		w := ch.weights[e]
		weights[e.m.clusterID] = w
		pc := PerClusterServiceName(s.ns, s.name, e.m.clusterID)
		objs = append(objs, Object{Path: s.dir + "cluster-" + e.m.clusterID + "-service.yaml", Object: perClusterService(s.ns, s.name, pc, e.m.clusterID, hp)})
		objs = append(objs, s.endpoints(c, e, pc, httpOnly)...)
		backends = append(backends, gatewayv1.HTTPBackendRef{BackendRef: backendRef(pc, hp.Port, &w)})
	}
	route := &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayAPIPrefix, Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: weightedName(s.name), Namespace: s.ns, Labels: routeLabels(s.name)},
		Spec:       gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: backends}}},
	}
	objs = append(objs, Object{Path: s.dir + "httproute-weighted.yaml", Object: route})
	if c.mesh {
		port := gatewayv1.PortNumber(hp.Port)
		route.Spec.ParentRefs = []gatewayv1.ParentReference{{Group: &coreGroup, Kind: &serviceKind, Name: gatewayv1.ObjectName(s.derived), Port: &port}}
		for _, e := range ch.sources {
			objs = append(objs, s.endpoints(c, e, s.derived, s.portNames)...)
		}
		return objs, weights, ""
	}
	section := gatewayv1.SectionName(fmt.Sprintf("http-%d", listener))
	route.Spec.ParentRefs = []gatewayv1.ParentReference{{Group: &gatewayGroup, Kind: &listenerSetKind, Name: gatewayv1.ObjectName(weightedName(s.name)), SectionName: &section}}
	objs = append(objs, Object{Path: s.dir + "listenerset-weighted.yaml",
		Object: c.gw.listenerSet(s.ns, weightedName(s.name), s.name, sameNamespaceListener(section, listener, gatewayv1.HTTPProtocolType, httpRouteKind))})
	// The derived Service's HTTP port goes to this member's own gateway,
	// which splits it by weight; its other ports go to the sources directly.
	objs = append(objs, s.localGatewaySlices(c, hp, listener)...)
	others := map[string]bool{}
	for n := range s.portNames {
		if n != hp.Name {
			others[n] = true
		}
	}
	if len(others) > 0 {
		for _, e := range ch.sources {
			objs = append(objs, s.endpoints(c, e, s.derived, others)...)
		}
	}
	return objs, weights, ""
}

func perClusterService(ns, name, svcName, clusterID string, hp *mcsv1alpha1.ServicePort) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: svcName, Namespace: ns,
			Labels: managedLabels(map[string]string{mcsv1alpha1.LabelServiceName: name, mcsv1alpha1.LabelSourceCluster: clusterID}),
		},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Name: hp.Name, Protocol: hp.Protocol, AppProtocol: hp.AppProtocol, Port: hp.Port,
				TargetPort: intstr.FromInt32(hp.Port)}},
		},
	}
}

// localGatewaySlices point the derived Service's HTTP port at consumer
// c's own gateway, on the listener of the weighted route.
func (s *svc) localGatewaySlices(c *member, hp *mcsv1alpha1.ServicePort, listener int32) []Object {
	var out []Object
	for _, fam := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		eps := addressEndpoints(c.gw.addresses, fam, true)
		if len(eps) == 0 {
			continue
		}
		name, proto, port := hp.Name, hp.Protocol, listener
		sname := sliceName(s.derived, c.clusterID, "weighted/"+string(fam))
		out = append(out, Object{Path: s.dir + "endpointslice-weighted-" + sname[len(sname)-10:] + ".yaml", Object: &discoveryv1.EndpointSlice{
			TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			// No source-cluster label: the endpoints are this member's
			// gateway, which spreads the traffic over several clusters.
			ObjectMeta:  sliceMeta(s.ns, sname, s.name, s.derived, ""),
			AddressType: fam,
			Endpoints:   eps,
			Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port, AppProtocol: hp.AppProtocol}},
		}})
	}
	return out
}
