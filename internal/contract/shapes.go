// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// service: a selectorless ClusterIP Service (headless at most) named as
// the renderer names a derived or per-cluster Service, for an import of
// the same commit. Everything that exposes a Service beyond its cluster IP
// (externalIPs, node ports, a load balancer) or redirects it (a selector,
// externalName) is never rendered.
func (c *commit) service(u *unstructured.Unstructured) string {
	if bad := extraKeys(u.Object, "apiVersion", "kind", "metadata", "spec"); bad != "" {
		return bad + " is never rendered on a Service"
	}
	if why := onlyLabels(u, []string{mcsv1alpha1.LabelServiceName}, mcsv1alpha1.LabelSourceCluster); why != "" {
		return why
	}
	ns, l := u.GetNamespace(), u.GetLabels()
	svc, source := l[mcsv1alpha1.LabelServiceName], l[mcsv1alpha1.LabelSourceCluster]
	want := render.DerivedServiceName(ns, svc)
	if source != "" {
		want = render.PerClusterServiceName(ns, svc, source)
	}
	if u.GetName() != want {
		return fmt.Sprintf("the renderer names this Service %q (from its labels), not %q", want, u.GetName())
	}
	if !c.imports[ns+"/"+svc] {
		return fmt.Sprintf("no ServiceImport %s/%s in this commit for it to back", ns, svc)
	}
	spec := mapAt(u.Object, "spec")
	if bad := extraKeys(spec, "type", "clusterIP", "ports", "ipFamilies", "ipFamilyPolicy",
		"sessionAffinity", "sessionAffinityConfig", "trafficDistribution"); bad != "" {
		return "spec." + bad + " is never rendered on a Service"
	}
	if t := str(spec, "type"); t != "ClusterIP" {
		return fmt.Sprintf("spec.type %q: the renderer writes ClusterIP only", t)
	}
	if ip, ok := spec["clusterIP"]; ok && ip != "None" {
		return fmt.Sprintf("spec.clusterIP %v: the renderer sets none, or None for a headless import", ip)
	}
	for i, p := range listAt(spec, "ports") {
		if bad := extraKeys(p, "name", "protocol", "appProtocol", "port", "targetPort"); bad != "" {
			return fmt.Sprintf("spec.ports[%d].%s is never rendered", i, bad)
		}
		if fmt.Sprint(p["targetPort"]) != fmt.Sprint(p["port"]) {
			return fmt.Sprintf("spec.ports[%d].targetPort %v differs from its port %v", i, p["targetPort"], p["port"])
		}
	}
	return ""
}

// slice: an EndpointSlice the project manages, feeding a Service of the
// same commit, never one of the member's own Services (not the kubernetes
// Service, not a user's).
func (c *commit) slice(u *unstructured.Unstructured) string {
	if bad := extraKeys(u.Object, "apiVersion", "kind", "metadata", "addressType", "endpoints", "ports"); bad != "" {
		return bad + " is never rendered on an EndpointSlice"
	}
	required := []string{discoveryv1.LabelManagedBy, discoveryv1.LabelServiceName, mcsv1alpha1.LabelServiceName}
	if why := onlyLabels(u, required, mcsv1alpha1.LabelSourceCluster); why != "" {
		return why
	}
	l := u.GetLabels()
	if l[discoveryv1.LabelManagedBy] != render.EndpointSliceManager {
		return fmt.Sprintf("label %s is %q, not %q", discoveryv1.LabelManagedBy, l[discoveryv1.LabelManagedBy], render.EndpointSliceManager)
	}
	target := u.GetNamespace() + "/" + l[discoveryv1.LabelServiceName]
	svc, ok := c.services[target]
	if !ok {
		return fmt.Sprintf("it feeds Service %s, which this commit does not render within the contract; a slice may only feed a rendered Service", target)
	}
	if svc.GetLabels()[mcsv1alpha1.LabelServiceName] != l[mcsv1alpha1.LabelServiceName] {
		return fmt.Sprintf("label %s does not match that of Service %s", mcsv1alpha1.LabelServiceName, target)
	}
	if t := str(u.Object, "addressType"); t != string(discoveryv1.AddressTypeIPv4) && t != string(discoveryv1.AddressTypeIPv6) {
		return fmt.Sprintf("addressType %q: the renderer writes IPv4 or IPv6 slices only", t)
	}
	for i, e := range listAt(u.Object, "endpoints") {
		// targetRef and nodeName would name objects of another cluster.
		if bad := extraKeys(e, "addresses", "conditions", "hostname", "zone"); bad != "" {
			return fmt.Sprintf("endpoints[%d].%s is never rendered", i, bad)
		}
	}
	return ""
}

// namespace: only with createMissingNamespaces, and with no label or
// annotation but the managed-by one (a privileged Pod Security label would
// stay: Namespaces are never pruned).
func (c *commit) namespace(u *unstructured.Unstructured) string {
	if !c.m.CreateMissingNamespaces {
		return "spec.render.createMissingNamespaces is off, so no Namespace is rendered"
	}
	if bad := extraKeys(u.Object, "apiVersion", "kind", "metadata", "spec", "status"); bad != "" {
		return bad + " is never rendered on a Namespace"
	}
	// The typed object serializes empty spec and status; finalizers there
	// would keep the Namespace from ever being deleted.
	if len(mapAt(u.Object, "spec")) > 0 || len(mapAt(u.Object, "status")) > 0 {
		return "a Namespace is rendered with an empty spec and status"
	}
	return onlyLabels(u, nil)
}
