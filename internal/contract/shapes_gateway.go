// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// route: an HTTPRoute or TCPRoute attached only to the member's configured
// Gateway, to a ListenerSet of the same commit, or (in a mesh) to a
// Service of the same commit; its backends are Services of its own
// namespace: the exported Service itself or one the commit renders.
func (c *commit) route(u *unstructured.Unstructured, http bool) string {
	kind := u.GetKind()
	if bad := extraKeys(u.Object, "apiVersion", "kind", "metadata", "spec"); bad != "" {
		return bad + " is never rendered on a " + kind
	}
	if why := onlyLabels(u, []string{mcsv1alpha1.LabelServiceName}); why != "" {
		return why
	}
	spec := mapAt(u.Object, "spec")
	specKeys := []string{"parentRefs", "rules"}
	if http {
		specKeys = append(specKeys, "hostnames")
	}
	if bad := extraKeys(spec, specKeys...); bad != "" {
		return "spec." + bad + " is never rendered on a " + kind
	}
	ns := u.GetNamespace()
	for i, p := range listAt(spec, "parentRefs") {
		if why := c.parent(ns, p); why != "" {
			return fmt.Sprintf("spec.parentRefs[%d]: %s", i, why)
		}
	}
	exported := u.GetLabels()[mcsv1alpha1.LabelServiceName]
	for i, r := range listAt(spec, "rules") {
		if bad := extraKeys(r, "matches", "filters", "backendRefs"); bad != "" {
			return fmt.Sprintf("spec.rules[%d].%s is never rendered", i, bad)
		}
		for j, f := range listAt(r, "filters") {
			if t := str(f, "type"); t != "URLRewrite" {
				return fmt.Sprintf("spec.rules[%d].filters[%d]: type %q; the renderer writes URLRewrite only", i, j, t)
			}
		}
		for j, b := range listAt(r, "backendRefs") {
			if bad := extraKeys(b, "name", "port", "weight"); bad != "" {
				return fmt.Sprintf("spec.rules[%d].backendRefs[%d].%s is never rendered (a backend is a Service of the route's namespace)", i, j, bad)
			}
			name := str(b, "name")
			if _, rendered := c.services[ns+"/"+name]; name != exported && !rendered {
				return fmt.Sprintf("spec.rules[%d].backendRefs[%d]: Service %s is neither the exported Service %s nor one this commit renders within the contract", i, j, name, exported)
			}
		}
	}
	return ""
}

// parent checks one parentRef of a route in namespace ns.
func (c *commit) parent(ns string, p map[string]any) string {
	if bad := extraKeys(p, "group", "kind", "name", "namespace", "sectionName", "port"); bad != "" {
		return bad + " is never rendered"
	}
	group, hasGroup := p["group"]
	kind, name := str(p, "kind"), str(p, "name")
	if kind == "" {
		kind = "Gateway"
	}
	pns := refNamespace(p, ns)
	switch {
	case kind == "Gateway" && (!hasGroup || group == gatewayGroup):
		return c.isMemberGateway(pns, name)
	case kind == "ListenerSet" && group == gatewayGroup && pns == ns && c.sets[ns+"/"+name]:
		return ""
	case kind == "Service" && group == "" && hasGroup && pns == ns:
		if _, ok := c.services[ns+"/"+name]; ok {
			return ""
		}
		return fmt.Sprintf("Service %s/%s is not rendered in this commit within the contract", ns, name)
	}
	return fmt.Sprintf("%s %s/%s: routes attach only to the member's Gateway or to a ListenerSet or Service of the same commit", kind, pns, name)
}

func (c *commit) isMemberGateway(ns, name string) string {
	if c.m.GatewayName == "" {
		return fmt.Sprintf("Gateway %s/%s: member %s has no gateway configured", ns, name, c.m.Name)
	}
	if ns != c.m.GatewayNamespace || name != c.m.GatewayName {
		return fmt.Sprintf("Gateway %s/%s is not member %s's Gateway %s/%s", ns, name, c.m.Name, c.m.GatewayNamespace, c.m.GatewayName)
	}
	return ""
}

// listenerSet: attached to the member's Gateway, each listener open only
// to routes of its own namespace.
func (c *commit) listenerSet(u *unstructured.Unstructured) string {
	if bad := extraKeys(u.Object, "apiVersion", "kind", "metadata", "spec"); bad != "" {
		return bad + " is never rendered on a ListenerSet"
	}
	if why := onlyLabels(u, []string{mcsv1alpha1.LabelServiceName}); why != "" {
		return why
	}
	spec := mapAt(u.Object, "spec")
	if bad := extraKeys(spec, "parentRef", "listeners"); bad != "" {
		return "spec." + bad + " is never rendered on a ListenerSet"
	}
	p := mapAt(spec, "parentRef")
	if bad := extraKeys(p, "group", "kind", "name", "namespace"); bad != "" {
		return "spec.parentRef." + bad + " is never rendered"
	}
	pns := refNamespace(p, u.GetNamespace())
	if k := str(p, "kind"); k != "" && k != "Gateway" {
		return fmt.Sprintf("spec.parentRef: kind %s; a ListenerSet attaches to the member's Gateway", k)
	}
	if why := c.isMemberGateway(pns, str(p, "name")); why != "" {
		return "spec.parentRef: " + why
	}
	for i, l := range listAt(spec, "listeners") {
		if bad := extraKeys(l, "name", "port", "protocol", "allowedRoutes"); bad != "" {
			return fmt.Sprintf("spec.listeners[%d].%s is never rendered", i, bad)
		}
		if from := str(mapAt(l, "allowedRoutes", "namespaces"), "from"); from != "Same" {
			return fmt.Sprintf("spec.listeners[%d].allowedRoutes.namespaces.from %q: the renderer opens a listener to its own namespace only (Same)", i, from)
		}
	}
	return ""
}

// refNamespace is the namespace a Gateway API reference points into: its
// own field when set (a non-string reads as "", matching nothing), else
// the referring object's namespace.
func refNamespace(ref map[string]any, own string) string {
	v, ok := ref["namespace"]
	if !ok {
		return own
	}
	ns, _ := v.(string)
	return ns
}

// maxGatewayListeners is the most listeners a Gateway holds; the renderer
// never declares more, whatever the user's own listeners leave room for.
const maxGatewayListeners = 64

// gateway: the member's own Gateway, only when its gateway declares the
// TCP listeners there, and of it only those listeners. Everything else of
// the object is the user's: a class, a label, an annotation, another field
// or a listener of another shape would change the user's Gateway (or mark
// it as mcs-gitops's), where the apply only merges listeners into it.
func (c *commit) gateway(u *unstructured.Unstructured) string {
	if !c.m.GatewayListeners {
		return fmt.Sprintf("member %s's gateway does not declare its listeners in the Gateway (tcpListeners: Gateway), so no Gateway is rendered", c.m.Name)
	}
	if why := c.isMemberGateway(u.GetNamespace(), u.GetName()); why != "" {
		return why
	}
	if bad := extraKeys(u.Object, "apiVersion", "kind", "metadata", "spec"); bad != "" {
		return bad + " is never rendered on a Gateway"
	}
	if bad := extraKeys(mapAt(u.Object, "metadata"), "name", "namespace"); bad != "" {
		return "metadata." + bad + " is never rendered on a Gateway: the user's Gateway keeps its own"
	}
	spec := mapAt(u.Object, "spec")
	if bad := extraKeys(spec, "listeners"); bad != "" {
		return "spec." + bad + " is never rendered on a Gateway: only listeners are merged into it"
	}
	listeners := listAt(spec, "listeners")
	switch {
	case len(listeners) == 0:
		return "a Gateway is rendered only with listeners to merge into it"
	case len(listeners) > maxGatewayListeners:
		return fmt.Sprintf("%d listeners; a Gateway holds at most %d", len(listeners), maxGatewayListeners)
	}
	for i, l := range listeners {
		if why := gatewayListener(l); why != "" {
			return fmt.Sprintf("spec.listeners[%d]: %s", i, why)
		}
	}
	return ""
}

// gatewayListener: a TCP listener named after its port, open to TCPRoutes
// of one namespace, selected by its name label.
func gatewayListener(l map[string]any) string {
	if bad := extraKeys(l, "name", "port", "protocol", "allowedRoutes"); bad != "" {
		return bad + " is never rendered"
	}
	port, ok := number(l["port"])
	if !ok || port < 1 || port > 65535 {
		return fmt.Sprintf("port %v is not a port number", l["port"])
	}
	if name, want := str(l, "name"), render.GatewayListenerName(int32(port)); name != want {
		return fmt.Sprintf("name %q: the renderer names the listener on port %d %q", name, port, want)
	}
	if p := str(l, "protocol"); p != "TCP" {
		return fmt.Sprintf("protocol %q: the renderer declares TCP listeners only", p)
	}
	ar := mapAt(l, "allowedRoutes")
	if bad := extraKeys(ar, "namespaces", "kinds"); bad != "" {
		return "allowedRoutes." + bad + " is never rendered"
	}
	ns := mapAt(ar, "namespaces")
	if bad := extraKeys(ns, "from", "selector"); bad != "" {
		return "allowedRoutes.namespaces." + bad + " is never rendered"
	}
	sel := mapAt(ns, "selector")
	if bad := extraKeys(sel, "matchLabels"); bad != "" {
		return "allowedRoutes.namespaces.selector." + bad + " is never rendered"
	}
	match := mapAt(sel, "matchLabels")
	if v, _ := match[corev1.LabelMetadataName].(string); str(ns, "from") != "Selector" || len(match) != 1 || v == "" {
		return fmt.Sprintf("allowedRoutes.namespaces: the renderer opens a listener to one namespace only (from: Selector, matchLabels %s)", corev1.LabelMetadataName)
	}
	kinds := listAt(ar, "kinds")
	if len(kinds) != 1 || extraKeys(kinds[0], "group", "kind") != "" || str(kinds[0], "group") != gatewayGroup || str(kinds[0], "kind") != "TCPRoute" {
		return "allowedRoutes.kinds: the renderer admits TCPRoutes only"
	}
	return ""
}

// number reads an integer as YAML (float64) or JSON decoding (int64)
// leaves it in an unstructured object.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), float64(int64(n)) == n
	}
	return 0, false
}
