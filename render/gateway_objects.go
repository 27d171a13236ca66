// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"net/netip"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

var (
	gatewayGroup     = gatewayv1.Group(gatewayv1.GroupName)
	gatewayKind      = gatewayv1.Kind("Gateway")
	listenerSetKind  = gatewayv1.Kind("ListenerSet")
	tcpRouteKind     = gatewayv1.Kind("TCPRoute")
	fromSame         = gatewayv1.NamespacesFromSame
	gatewayAPIPrefix = gatewayv1.GroupName + "/v1"
)

func routeLabels(service string) map[string]string {
	return managedLabels(map[string]string{mcsv1alpha1.LabelServiceName: service})
}

// Names of the routing objects for a service. They end in a suffix no
// Service name needs, so they rarely meet a user's own route; when they
// do, the applier reports the collision instead of taking the object over.
func clusterSetRouteName(svc string) string   { return svc + "-clusterset" }
func pathRouteName(svc string) string         { return svc + "-path" }
func tcpRouteName(svc string, p int32) string { return fmt.Sprintf("%s-clusterset-%d", svc, p) }
func listenerName(port int32) string          { return fmt.Sprintf("tcp-%d", port) }

// exportObjects are the routes an exporter's gateway needs for a valid
// export: an HTTPRoute by clusterset hostname for the HTTP port, one for
// the path rule, and a TCPRoute per other port on a TCP listener of its
// own: in a ListenerSet of the export's, or, when the gateway declares
// its listeners in the Gateway, one of gatewayListeners. Paths are
// relative to the member's directory.
func (r *exportRoute) exportObjects() []Object {
	ns, name := r.e.se.Namespace, r.e.se.Name
	dir := ns + "/" + name + "/"
	gwNS := gatewayv1.Namespace(r.gw.namespace)
	parent := gatewayv1.ParentReference{Group: &gatewayGroup, Kind: &gatewayKind, Namespace: &gwNS, Name: gatewayv1.ObjectName(r.gw.name)}
	var out []Object
	if r.http != nil {
		backend := []gatewayv1.HTTPBackendRef{{BackendRef: backendRef(name, r.http.Port, nil)}}
		out = append(out, Object{Path: dir + "gateway-httproute-clusterset.yaml", Object: &gatewayv1.HTTPRoute{
			TypeMeta:   metav1.TypeMeta{APIVersion: gatewayAPIPrefix, Kind: "HTTPRoute"},
			ObjectMeta: metav1.ObjectMeta{Name: clusterSetRouteName(name), Namespace: ns, Labels: routeLabels(name)},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(ClusterSetHostname(ns, name))},
				Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: backend}},
			},
		}})
		if pr := r.path; pr != nil {
			out = append(out, Object{Path: dir + "gateway-httproute-path.yaml", Object: pathRoute(ns, name, parent, pr, backend)})
		}
	}
	if len(r.tcp) == 0 {
		return out
	}
	if !r.gw.listenersInGateway {
		var listeners []gatewayv1.ListenerEntry
		for _, p := range r.tcp {
			l := r.listeners[p.Port]
			listeners = append(listeners, sameNamespaceListener(gatewayv1.SectionName(listenerName(l)), l, gatewayv1.TCPProtocolType, tcpRouteKind))
		}
		ls := r.gw.listenerSet(ns, clusterSetRouteName(name), name, listeners...)
		out = append(out, Object{Path: dir + "gateway-listenerset.yaml", Object: ls})
	}
	for _, p := range r.tcp {
		l := r.listeners[p.Port]
		var tcpParent gatewayv1.ParentReference
		if r.gw.listenersInGateway {
			section := gatewayv1.SectionName(GatewayListenerName(l))
			tcpParent = parent
			tcpParent.SectionName = &section
		} else {
			section := gatewayv1.SectionName(listenerName(l))
			tcpParent = gatewayv1.ParentReference{Group: &gatewayGroup, Kind: &listenerSetKind, Name: gatewayv1.ObjectName(clusterSetRouteName(name)), SectionName: &section}
		}
		out = append(out, Object{Path: fmt.Sprintf("%sgateway-tcproute-%d.yaml", dir, p.Port), Object: &gatewayv1.TCPRoute{
			TypeMeta:   metav1.TypeMeta{APIVersion: gatewayAPIPrefix, Kind: "TCPRoute"},
			ObjectMeta: metav1.ObjectMeta{Name: tcpRouteName(name, p.Port), Namespace: ns, Labels: routeLabels(name)},
			Spec: gatewayv1.TCPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{tcpParent}},
				Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backendRef(name, p.Port, nil)}}},
			},
		}})
	}
	return out
}

// listenerSet is a ListenerSet of this gateway in namespace ns, for the
// routes of service svc.
func (g *gateway) listenerSet(ns, name, svc string, listeners ...gatewayv1.ListenerEntry) *gatewayv1.ListenerSet {
	gwNS := gatewayv1.Namespace(g.namespace)
	return &gatewayv1.ListenerSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayAPIPrefix, Kind: "ListenerSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: routeLabels(svc)},
		Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Group: &gatewayGroup, Kind: &gatewayKind, Name: gatewayv1.ObjectName(g.name), Namespace: &gwNS},
			Listeners: listeners,
		},
	}
}

// sameNamespaceListener carries one Service's port: only routes of the
// ListenerSet's namespace, and only of kind routeKind, may attach.
func sameNamespaceListener(name gatewayv1.SectionName, port int32, proto gatewayv1.ProtocolType, routeKind gatewayv1.Kind) gatewayv1.ListenerEntry {
	return gatewayv1.ListenerEntry{
		Name: name, Port: gatewayv1.PortNumber(port), Protocol: proto,
		AllowedRoutes: &gatewayv1.AllowedRoutes{
			Namespaces: &gatewayv1.RouteNamespaces{From: &fromSame},
			Kinds:      []gatewayv1.RouteGroupKind{{Group: &gatewayGroup, Kind: routeKind}},
		},
	}
}

func pathRoute(ns, name string, parent gatewayv1.ParentReference, pr *pathRule, backend []gatewayv1.HTTPBackendRef) *gatewayv1.HTTPRoute {
	pt, path := pr.pathType, pr.path
	rule := gatewayv1.HTTPRouteRule{
		Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &pt, Value: &path}}},
		BackendRefs: backend,
	}
	if pr.rewrite != nil {
		rw := *pr.rewrite
		rule.Filters = []gatewayv1.HTTPRouteFilter{{
			Type: gatewayv1.HTTPRouteFilterURLRewrite,
			URLRewrite: &gatewayv1.HTTPURLRewriteFilter{Path: &gatewayv1.HTTPPathModifier{
				Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: &rw,
			}},
		}}
	}
	route := &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayAPIPrefix, Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: pathRouteName(name), Namespace: ns, Labels: routeLabels(name)},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}},
			Rules:           []gatewayv1.HTTPRouteRule{rule},
		},
	}
	for _, h := range pr.hostnames {
		route.Spec.Hostnames = append(route.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	return route
}

func backendRef(service string, port int32, weight *int32) gatewayv1.BackendRef {
	p := gatewayv1.PortNumber(port)
	return gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(service), Port: &p}, Weight: weight}
}

// gatewaySlices are what a consumer gets for an export it reaches through
// the exporter's gateway: one slice per address family of the gateway's
// addresses, its ports those of the export that the gateway carries,
// mapped to the gateway's ports. The endpoints are ready while the
// exporter has a ready endpoint, so readiness (and failover) crosses the
// gateway too.
func gatewaySlices(ns, name, derived string, r *exportRoute, portNames map[string]bool, pathPrefix string, families map[discoveryv1.AddressType]bool) []Object {
	ready := r.e.ready > 0
	var ports []discoveryv1.EndpointPort
	for _, p := range r.e.svc.Spec.Ports {
		if !portNames[p.Name] {
			continue
		}
		gp, ok := r.gatewayPort(p.Port)
		if !ok {
			continue
		}
		pn, proto, port := p.Name, protocol(p.Protocol), gp
		ports = append(ports, discoveryv1.EndpointPort{Name: &pn, Protocol: &proto, Port: &port, AppProtocol: p.AppProtocol})
	}
	var out []Object
	for _, fam := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		if families != nil && !families[fam] {
			continue
		}
		eps := addressEndpoints(r.gw.addresses, fam, ready)
		if len(eps) == 0 {
			continue
		}
		sname := sliceName(derived, r.e.m.clusterID, "gateway/"+string(fam))
		out = append(out, Object{Path: pathPrefix + sname[len(sname)-10:] + ".yaml", Object: &discoveryv1.EndpointSlice{
			TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			ObjectMeta:  sliceMeta(ns, sname, name, derived, r.e.m.clusterID),
			AddressType: fam,
			Endpoints:   eps,
			Ports:       ports,
		}})
	}
	return out
}

// addressEndpoints are one endpoint per address of family fam, for slices
// that point at a gateway rather than at pods.
func addressEndpoints(addrs []netip.Addr, fam discoveryv1.AddressType, ready bool) []discoveryv1.Endpoint {
	var eps []discoveryv1.Endpoint
	for _, a := range addrs {
		if (fam == discoveryv1.AddressTypeIPv4) != a.Is4() {
			continue
		}
		rdy, serving, term := ready, ready, false
		eps = append(eps, discoveryv1.Endpoint{
			Addresses:  []string{a.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &rdy, Serving: &serving, Terminating: &term},
		})
	}
	return eps
}
