// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// importChanges says, field by field, how the merged import of a service
// changed, old -> new: "port http 8000/TCP -> 8001/TCP", "port grpc
// added (9090/TCP)", "sessionAffinity None -> ClientIP". Nil when either
// side has no import (a service appearing or going is said elsewhere) or
// nothing a ServiceImport carries changed. Ports are matched by name, or by
// number when unnamed.
func importChanges(prev, next *render.ServiceReport) []string {
	if prev == nil || next == nil || prev.Import == nil || next.Import == nil {
		return nil
	}
	a, b := prev.Import, next.Import
	var out []string
	field := func(name, was, is string) {
		if was != is {
			out = append(out, fmt.Sprintf("%s %s -> %s", name, orNone(was), orNone(is)))
		}
	}
	if prev.Type != next.Type {
		field("type", prev.Type, next.Type)
	}
	out = append(out, portChanges(a.Ports, b.Ports)...)
	field("sessionAffinity", a.SessionAffinity, b.SessionAffinity)
	field("ipFamilies", strings.Join(a.IPFamilies, ","), strings.Join(b.IPFamilies, ","))
	field("internalTrafficPolicy", a.InternalTrafficPolicy, b.InternalTrafficPolicy)
	field("trafficDistribution", a.TrafficDistribution, b.TrafficDistribution)
	out = append(out, metadataChanges("label", a.ExportedLabels, b.ExportedLabels)...)
	out = append(out, metadataChanges("annotation", a.ExportedAnnotations, b.ExportedAnnotations)...)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// portKey matches a port across two renders.
func portKey(p render.ImportPort) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprintf("%d/%s", p.Port, p.Protocol)
}

func describeImportPort(p render.ImportPort) string {
	s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
	if p.AppProtocol != "" {
		s += " " + p.AppProtocol
	}
	return s
}

func portChanges(was, is []render.ImportPort) []string {
	before := map[string]render.ImportPort{}
	for _, p := range was {
		before[portKey(p)] = p
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range is {
		k := portKey(p)
		seen[k] = true
		old, ok := before[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("port %s added (%s)", k, describeImportPort(p)))
		case old != p:
			out = append(out, fmt.Sprintf("port %s %s -> %s", k, describeImportPort(old), describeImportPort(p)))
		}
	}
	for _, p := range was {
		if k := portKey(p); !seen[k] {
			out = append(out, fmt.Sprintf("port %s removed (was %s)", k, describeImportPort(p)))
		}
	}
	return out
}

func metadataChanges(what string, was, is map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(is)) {
		old, ok := was[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s %s=%s added", what, k, is[k]))
		case old != is[k]:
			out = append(out, fmt.Sprintf("%s %s %s -> %s", what, k, old, is[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(was)) {
		if _, ok := is[k]; !ok {
			out = append(out, fmt.Sprintf("%s %s removed", what, k))
		}
	}
	return out
}
