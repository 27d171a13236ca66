// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// PartialPort is a port of an import that only some of the import's IP
// families can reach: every export offering it is in fewer families than
// the import (an IPv6-only member exposing a port the dual-stack oldest
// export does not). Clients of the missing family get no answer on it,
// and no status field of the MCS API can say so, so conditions do.
type PartialPort struct {
	Port ImportPort `json:"port"`
	// Families are the IP families the port has endpoints in.
	Families []string `json:"families"`
	// Exporters are the members whose exports offer the port.
	Exporters []string `json:"exporters"`
}

// partialPorts lists the import's ports reachable in fewer families than
// the import has, in port order. An import without families (no export
// sets any) has nothing to compare against.
func (s *svc) partialPorts(valid []*export) []PartialPort {
	if len(s.mg.families) < 2 {
		return nil
	}
	var out []PartialPort
	for _, p := range s.mg.ports {
		fams := map[corev1.IPFamily]bool{}
		var exporters []string
		for _, e := range valid {
			if !s.offered[e][p.Name] {
				continue
			}
			exporters = append(exporters, e.m.name)
			for _, f := range exportFamilies(e) {
				fams[f] = true
			}
		}
		var served []string
		for _, f := range s.mg.families {
			if fams[f] {
				served = append(served, string(f))
			}
		}
		if len(served) == len(s.mg.families) || len(exporters) == 0 {
			continue
		}
		slices.Sort(exporters)
		out = append(out, PartialPort{Port: reportPort(p), Families: served, Exporters: exporters})
	}
	return out
}

// exportFamilies are the families an export has endpoints in: its
// Service's, or, where the Service sets none (a hand-written snapshot),
// its slices' address types.
func exportFamilies(e *export) []corev1.IPFamily {
	if len(e.svc.Spec.IPFamilies) > 0 {
		return e.svc.Spec.IPFamilies
	}
	var out []corev1.IPFamily
	for _, sl := range e.slices {
		var f corev1.IPFamily
		switch sl.AddressType {
		case discoveryv1.AddressTypeIPv4:
			f = corev1.IPv4Protocol
		case discoveryv1.AddressTypeIPv6:
			f = corev1.IPv6Protocol
		default:
			continue
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Describe says where the port can be reached, for a condition message.
func (p PartialPort) Describe() string {
	fams := p.Families
	if len(fams) == 0 {
		return fmt.Sprintf("port %s has no endpoints in the import's IP families", p.Port.Describe())
	}
	return fmt.Sprintf("port %s is served over %s only (exported by %s)", p.Port.Describe(), strings.Join(fams, " and "), strings.Join(p.Exporters, ", "))
}

// Describe names a port the way conditions do: "tcp2" 4242/TCP.
func (p ImportPort) Describe() string {
	s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
	if p.Name != "" {
		s = fmt.Sprintf("%q %s", p.Name, s)
	}
	return s
}

// PartialPortsNote is what a Ready message adds for the ports that some
// of families (the import's, or one member's share of them) cannot reach:
// "" when every port answers in every one of them.
func PartialPortsNote(ps []PartialPort, families []string) string {
	var parts []string
	for _, p := range ps {
		var missing []string
		for _, f := range families {
			if !slices.Contains(p.Families, f) {
				missing = append(missing, f)
			}
		}
		switch {
		case len(missing) == 0:
		case len(missing) == len(families):
			parts = append(parts, fmt.Sprintf("%s: no client here can reach it", p.Describe()))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s clients get no answer on it", p.Describe(), strings.Join(missing, " and ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// warnPartial tells, per partial port, which importing members have
// clients it cannot answer, and which cannot reach it at all.
func (s *svc) warnPartial(partial []PartialPort, importers []*member) {
	for _, p := range partial {
		some := map[string][]string{} // missing families -> members
		var none []string
		for _, m := range importers {
			fams := s.families(m)
			if fams == nil {
				continue // not served here at all: reported as notServed
			}
			var missing []string
			for _, f := range s.mg.families {
				if fams[discoveryv1.AddressType(f)] && !slices.Contains(p.Families, string(f)) {
					missing = append(missing, string(f))
				}
			}
			switch {
			case len(missing) == len(fams):
				none = append(none, m.name)
			case len(missing) > 0:
				k := strings.Join(missing, " and ")
				some[k] = append(some[k], m.name)
			}
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(some)) {
			parts = append(parts, fmt.Sprintf("%s clients in %s get no answer on it", k, strings.Join(some[k], ", ")))
		}
		if len(none) > 0 {
			parts = append(parts, strings.Join(none, ", ")+" cannot reach it at all")
		}
		s.warn("%s: %s", p.Describe(), strings.Join(parts, "; "))
	}
}
