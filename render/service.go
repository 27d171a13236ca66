// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// svc is one exported service while it is rendered: what every member's
// objects for it are built from.
type svc struct {
	ns, name, derived, dir string
	mg                     *merged
	// portNames are the ports of the ServiceImport; slices carry only these.
	portNames map[string]bool
	// offered are, per export, the names of the import's ports that export
	// offers exactly (same name, protocol and number): a source's slices
	// carry only those, so a port routes only to endpoints that expose it.
	offered map[*export]map[string]bool
	// pods are the exporters' own slices mirrored for the derived Service,
	// named once per service rather than once per importing member.
	pods     map[*export][]podSlice
	plan     *gatewayPlan
	warnings map[string]bool
	// unreached lists, per export its gateway cannot carry, the members
	// that reach it only through that gateway and so do without it.
	unreached map[*export][]string
	// familySets caches families: endpoints asks once per source.
	familySets map[*member]map[discoveryv1.AddressType]bool
}

// podSlice is one exporter slice as mirrored into importers.
type podSlice struct {
	src        *discoveryv1.EndpointSlice
	name, path string
}

func newSvc(ns, name string, mg *merged, valid []*export, plan *gatewayPlan) *svc {
	s := &svc{ns: ns, name: name, derived: DerivedServiceName(ns, name), dir: ns + "/" + name + "/", mg: mg,
		portNames: map[string]bool{}, offered: map[*export]map[string]bool{}, pods: map[*export][]podSlice{}, plan: plan, warnings: map[string]bool{},
		unreached: map[*export][]string{}, familySets: map[*member]map[discoveryv1.AddressType]bool{}}
	for _, p := range mg.ports {
		s.portNames[p.Name] = true
	}
	for _, e := range valid {
		s.pods[e] = s.podSlices(e, s.derived)
		s.offered[e] = routedPorts(mg.ports, e)
	}
	return s
}

// servesNothing reports whether none of the export's ports is one of the
// import's (every one lost a conflict), so it contributes no endpoint. An
// import without ports (headless) takes every export's endpoints.
func (s *svc) servesNothing(e *export) bool {
	return len(s.mg.ports) > 0 && len(s.offered[e]) == 0
}

func (s *svc) podSlices(e *export, target string) []podSlice {
	out := make([]podSlice, 0, len(e.slices))
	prefix := s.slicePrefix(e, target)
	for _, src := range e.slices {
		name := sliceName(target, e.m.clusterID, src.Name)
		out = append(out, podSlice{src: src, name: name, path: prefix + name[len(name)-10:] + ".yaml"})
	}
	return out
}

// slicePrefix starts the path of a slice of e's endpoints for target. The
// hash that ends it depends on the source only, so slices of the same
// source for the derived Service and for a per-cluster Service need
// different prefixes.
func (s *svc) slicePrefix(e *export, target string) string {
	if target == s.derived {
		return s.dir + "endpointslice-" + e.m.clusterID + "-"
	}
	return s.dir + "cluster-" + e.m.clusterID + "-endpointslice-"
}

func (s *svc) warn(format string, args ...any) { s.warnings[fmt.Sprintf(format, args...)] = true }

func (s *svc) sortedWarnings() []string {
	if len(s.warnings) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.warnings))
	for w := range s.warnings {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// endpoints are the slices consumer c gets for exporter e's endpoints,
// labelled for the Service target (the derived Service or a per-cluster
// one) and carrying only the ports in ports: the pods themselves where
// the data path is flat, else e's gateway.
func (s *svc) endpoints(c *member, e *export, target string, ports map[string]bool) []Object {
	ports = intersect(ports, s.offered[e])
	if len(s.portNames) > 0 && len(ports) == 0 {
		// None of the import's ports reaches this source; a slice without
		// ports would say nothing a client can use.
		return nil
	}
	families := s.families(c)
	if !throughGateway(c, e.m) {
		pods := s.pods[e]
		if target != s.derived {
			pods = s.podSlices(e, target)
		}
		out := make([]Object, 0, len(pods))
		for _, p := range pods {
			if families != nil && !families[p.src.AddressType] {
				continue // a family the consumer's derived Service does not have
			}
			out = append(out, Object{Path: p.path, Object: importedSlice(s.ns, s.name, target, p.name, p.src, e.m.clusterID, ports)})
		}
		return out
	}
	r := s.plan.routes[e]
	switch {
	case r != nil && r.invalid != nil:
		if !slices.Contains(s.unreached[e], c.name) {
			s.unreached[e] = append(s.unreached[e], c.name)
		}
		return nil
	case r == nil:
		s.warn("member %s reaches member %s only through a gateway, and %s has none: it gets none of %s's endpoints (set spec.members[].gateway for %s)",
			c.name, e.m.name, e.m.name, e.m.name, e.m.name)
		return nil
	case len(r.gw.addresses) == 0:
		s.warn("gateway host %q of member %s has no resolved address: members reaching it through its gateway get none of its endpoints", r.gw.host, e.m.name)
		return nil
	}
	for _, p := range r.unsupported {
		s.warn("port %s of member %s's export is %s, which a gateway cannot carry: members reaching %s through its gateway do not get it",
			portLabel(p.Name, p.Port), e.m.name, protocol(p.Protocol), e.m.name)
	}
	objs := gatewaySlices(s.ns, s.name, target, r, ports, s.slicePrefix(e, target), families)
	if len(objs) == 0 {
		s.warn("gateway of member %s has no address in the service's IP families: members reaching it through its gateway get none of its endpoints", e.m.name)
	}
	return objs
}

// families are the address families consumer c's derived Service has;
// slices of another family would never be used. nil means any.
func (s *svc) families(c *member) map[discoveryv1.AddressType]bool {
	if out, ok := s.familySets[c]; ok {
		return out
	}
	var out map[discoveryv1.AddressType]bool
	if fams, _ := c.servedFamilies(s.mg.families); len(fams) > 0 {
		out = map[discoveryv1.AddressType]bool{}
		for _, f := range fams {
			out[discoveryv1.AddressType(f)] = true
		}
	}
	s.familySets[c] = out
	return out
}

func familyList(fams []corev1.IPFamily) string {
	if len(fams) == 0 {
		return "(unknown)"
	}
	parts := make([]string, len(fams))
	for i, f := range fams {
		parts[i] = string(f)
	}
	return strings.Join(parts, " and ")
}

func portLabel(name string, port int32) string {
	if name == "" {
		return fmt.Sprint(port)
	}
	return fmt.Sprintf("%q (%d)", name, port)
}

// routedPorts are the names of the import ports e's Service has with the
// same protocol and number.
func routedPorts(ports []mcsv1alpha1.ServicePort, e *export) map[string]bool {
	out := map[string]bool{}
	for _, p := range ports {
		for _, sp := range e.svc.Spec.Ports {
			if sp.Name == p.Name && protocol(sp.Protocol) == p.Protocol && sp.Port == p.Port {
				out[p.Name] = true
			}
		}
	}
	return out
}

func intersect(a, b map[string]bool) map[string]bool {
	out := make(map[string]bool, min(len(a), len(b)))
	for k := range a {
		if b[k] {
			out[k] = true
		}
	}
	return out
}
