// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Member is what the contract needs to know of the member a directory is
// rendered for.
type Member struct {
	Name string
	// Gateway is the namespace and name of the member's Gateway; empty when
	// the member has none, and then no route or ListenerSet may attach to
	// any Gateway.
	GatewayNamespace, GatewayName string
	// GatewayListeners: the member's gateway declares its TCP listeners in
	// the Gateway itself (tcpListeners: Gateway), so the directory may hold
	// that Gateway, with those listeners only.
	GatewayListeners bool
	// CreateMissingNamespaces is spec.render.createMissingNamespaces: without
	// it a member directory holds no Namespace.
	CreateMissingNamespaces bool
}

// MemberOf reads a member's contract from the ClusterSet config.
func MemberOf(cfg *v1alpha1.ClusterSet, m *v1alpha1.Member) Member {
	out := Member{Name: m.Name, CreateMissingNamespaces: cfg.Spec.Render.CreateMissingNamespaces}
	if m.Gateway != nil {
		out.GatewayNamespace, out.GatewayName = m.Gateway.Namespace, m.Gateway.Name
		out.GatewayListeners = m.Gateway.TCPListeners == v1alpha1.TCPListenersGateway
	}
	return out
}

// Violation is one object that is not a shape the renderer emits.
type Violation struct {
	// Index is the object's position in the list given to Check.
	Index int
	// Object is "Kind/namespace/name".
	Object string
	Reason string
}

func (v Violation) String() string { return v.Object + ": " + v.Reason }

// commit indexes the objects of one member directory, which the rules
// need: a slice must feed a Service of the same commit, a route may attach
// only to a ListenerSet or Service of the same commit.
type commit struct {
	m        Member
	services map[string]*unstructured.Unstructured // "namespace/name"
	imports  map[string]bool
	sets     map[string]bool
}

// Check returns a Violation for every object in objs (one member
// directory of one commit) that is not a shape the renderer emits for m,
// in objs order. An object with a violation must not be applied, and does
// not count as rendered for the objects that refer to it: a slice may feed
// only a Service that is itself within the contract.
func Check(m Member, objs []*unstructured.Unstructured) []Violation {
	_, why := check(m, objs)
	return violations(objs, why)
}

// check is each object's verdict ("" when it passed) and the index of the
// objects that passed.
func check(m Member, objs []*unstructured.Unstructured) (*commit, []string) {
	c := &commit{m: m, services: map[string]*unstructured.Unstructured{}, imports: map[string]bool{}, sets: map[string]bool{}}
	why := make([]string, len(objs))
	// Referenced kinds first, each indexed once it has passed: imports
	// (Services need one), then Services and ListenerSets (slices and
	// routes need them), then the rest.
	for _, phase := range [][]schema.GroupKind{{ServiceImportKind}, {ServiceKind, ListenerSetKind}, nil} {
		for i, u := range objs {
			gk := u.GroupVersionKind().GroupKind()
			if !inPhase(gk, phase) {
				continue
			}
			if why[i] = c.check(u); why[i] != "" {
				continue
			}
			key := u.GetNamespace() + "/" + u.GetName()
			switch gk {
			case ServiceImportKind:
				c.imports[key] = true
			case ServiceKind:
				c.services[key] = u
			case ListenerSetKind:
				c.sets[key] = true
			}
		}
	}
	return c, why
}

func violations(objs []*unstructured.Unstructured, why []string) []Violation {
	var out []Violation
	for i, u := range objs {
		if why[i] != "" {
			out = append(out, Violation{Index: i, Object: describe(u), Reason: why[i]})
		}
	}
	return out
}

// inPhase says whether gk is checked in the phase listing kinds; the last
// phase (nil) takes every kind no earlier phase named.
func inPhase(gk schema.GroupKind, kinds []schema.GroupKind) bool {
	if kinds != nil {
		return slices.Contains(kinds, gk)
	}
	return gk != ServiceImportKind && gk != ServiceKind && gk != ListenerSetKind
}

func describe(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return u.GetKind() + "/" + ns + "/" + u.GetName()
	}
	return u.GetKind() + "/" + u.GetName()
}

// check returns why u breaks the contract, or "".
func (c *commit) check(u *unstructured.Unstructured) string {
	obj := u.Object
	if u.GetAPIVersion() == "" || u.GetName() == "" {
		return "an object without apiVersion or name is never rendered"
	}
	if u.GroupVersionKind().GroupKind() == GatewayKind {
		// The user's own object, which the renderer labels not at all.
		return c.gateway(u)
	}
	if l := u.GetLabels(); l[render.ManagedByLabel] != render.ManagedByValue {
		return fmt.Sprintf("label %s=%s is missing", render.ManagedByLabel, render.ManagedByValue)
	}
	if bad := extraKeys(mapAt(obj, "metadata"), "name", "namespace", "labels", "annotations"); bad != "" {
		return "metadata." + bad + " is never rendered"
	}
	switch gk := u.GroupVersionKind().GroupKind(); gk {
	case ServiceImportKind:
		return c.serviceImport(u)
	case ServiceKind:
		return c.service(u)
	case EndpointSliceKind:
		return c.slice(u)
	case HTTPRouteKind, TCPRouteKind:
		return c.route(u, gk == HTTPRouteKind)
	case ListenerSetKind:
		return c.listenerSet(u)
	case NamespaceKind:
		return c.namespace(u)
	default:
		return fmt.Sprintf("kind %s is never rendered", gk)
	}
}

// extraKeys names the first key of m not in allowed, "" when none.
func extraKeys(m map[string]any, allowed ...string) string {
	var extra []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return ""
	}
	sort.Strings(extra)
	return extra[0]
}

// onlyLabels checks that u's labels are among allowed and carry required.
func onlyLabels(u *unstructured.Unstructured, required []string, allowed ...string) string {
	l := u.GetLabels()
	allowed = append(append(allowed, required...), render.ManagedByLabel)
	keys := slices.Sorted(maps.Keys(l))
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return fmt.Sprintf("label %s is never rendered on a %s", k, u.GetKind())
		}
	}
	for _, k := range required {
		if l[k] == "" {
			return fmt.Sprintf("label %s is missing", k)
		}
	}
	if len(u.GetAnnotations()) > 0 {
		return fmt.Sprintf("a %s is rendered without annotations", u.GetKind())
	}
	return ""
}

func mapAt(m map[string]any, path ...string) map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	out, _ := v.(map[string]any)
	return out
}

func listAt(m map[string]any, path ...string) []map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		mm, _ := it.(map[string]any)
		out = append(out, mm) // a nil entry fails the checks that read it
	}
	return out
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func (c *commit) serviceImport(u *unstructured.Unstructured) string {
	if bad := extraKeys(u.Object, "apiVersion", "kind", "metadata", "spec", "status"); bad != "" {
		return bad + " is never rendered on a ServiceImport"
	}
	for k := range u.GetLabels() {
		if k != render.ManagedByLabel && strings.HasPrefix(k, "mcs-gitops.io/") {
			return fmt.Sprintf("label %s is reserved for the applier", k)
		}
	}
	want := render.DerivedServiceName(u.GetNamespace(), u.GetName())
	if got := u.GetAnnotations()[render.DerivedServiceAnnotation]; got != want {
		return fmt.Sprintf("annotation %s is %q; the renderer names this import's Service %q", render.DerivedServiceAnnotation, got, want)
	}
	if bad := extraKeys(mapAt(u.Object, "spec"), "ports", "type", "sessionAffinity", "sessionAffinityConfig",
		"ipFamilies", "internalTrafficPolicy", "trafficDistribution"); bad != "" {
		return "spec." + bad + " is never rendered on a ServiceImport"
	}
	if bad := extraKeys(mapAt(u.Object, "status"), "clusters"); bad != "" {
		return "status." + bad + " is never rendered on a ServiceImport"
	}
	return ""
}
