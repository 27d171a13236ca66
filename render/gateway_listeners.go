// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GatewayListeners is what mcs-gitops declares of a member's own Gateway
// when the member's gateway takes its TCP listeners in the Gateway itself
// (tcpListeners: Gateway): the listeners of its exports and nothing else.
// The user owns the Gateway; server-side apply merges these listeners into
// it by name (spec.listeners is a map-list keyed by name) and leaves the
// user's listeners, class and labels alone. That is why it is not a
// gatewayv1.Gateway, which always writes a gatewayClassName, and why it
// carries no label: the owner labels would make the user's Gateway look
// like something mcs-gitops may delete.
type GatewayListeners struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              GatewayListenersSpec `json:"spec"`
}

// GatewayListenersSpec holds the listeners only.
type GatewayListenersSpec struct {
	Listeners []gatewayv1.Listener `json:"listeners"`
}

// DeepCopyObject makes GatewayListeners a runtime.Object, as every
// rendered object is.
func (g *GatewayListeners) DeepCopyObject() runtime.Object {
	out := &GatewayListeners{TypeMeta: g.TypeMeta}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	for i := range g.Spec.Listeners {
		out.Spec.Listeners = append(out.Spec.Listeners, *g.Spec.Listeners[i].DeepCopy())
	}
	return out
}

// GatewayListenerPrefix starts the name of every listener mcs-gitops
// declares in a Gateway, so it rarely meets one of the user's; when it
// does, the apply reports the conflict rather than taking it over.
const GatewayListenerPrefix = "mcs-tcp-"

// GatewayListenerName names the Gateway listener on port.
func GatewayListenerName(port int32) string { return fmt.Sprintf("%s%d", GatewayListenerPrefix, port) }

// gatewayListeners are the listeners an export needs in its gateway's own
// Gateway: one per TCP port, each open only to TCPRoutes of the export's
// namespace. A Gateway's listener with From: Same would admit routes of
// the Gateway's namespace, not the export's, so the namespace is selected
// by its name label, which the apiserver sets on every Namespace. None
// when the gateway takes its listeners in ListenerSets.
func (r *exportRoute) gatewayListeners() []gatewayv1.Listener {
	if !r.gw.listenersInGateway {
		return nil
	}
	from := gatewayv1.NamespacesFromSelector
	var out []gatewayv1.Listener
	for _, p := range r.tcp {
		l := r.listeners[p.Port]
		out = append(out, gatewayv1.Listener{
			Name: gatewayv1.SectionName(GatewayListenerName(l)), Port: gatewayv1.PortNumber(l), Protocol: gatewayv1.TCPProtocolType,
			AllowedRoutes: &gatewayv1.AllowedRoutes{
				Namespaces: &gatewayv1.RouteNamespaces{From: &from, Selector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: r.e.se.Namespace},
				}},
				Kinds: []gatewayv1.RouteGroupKind{{Group: &gatewayGroup, Kind: tcpRouteKind}},
			},
		})
	}
	return out
}

// listenersObject is the member's GatewayListeners document for the
// listeners of all its exports, sorted by port so the bytes depend on the
// listeners only. Its file sits in the Gateway's namespace like every
// namespaced object's, beside the per-service directories, under a name
// no Service directory can have (a Service name holds no dot), and it
// belongs to no single service.
func (g *gateway) listenersObject(listeners []gatewayv1.Listener) Object {
	sorted := slices.Clone(listeners)
	slices.SortFunc(sorted, func(a, b gatewayv1.Listener) int { return int(a.Port) - int(b.Port) })
	return Object{Path: g.namespace + "/gateway-" + g.name + ".yaml", Object: &GatewayListeners{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayAPIPrefix, Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Namespace: g.namespace, Name: g.name},
		Spec:       GatewayListenersSpec{Listeners: sorted},
	}}
}
