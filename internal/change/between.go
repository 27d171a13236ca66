// SPDX-License-Identifier: Apache-2.0

package change

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// Between describes the change from prev to next; either may be nil (nothing
// rendered).
func Between(prev, next *render.Report) Set { return BetweenIn(prev, next, nil) }

// BetweenIn is Between for the services in only (namespace/name), and
// those on one side only; every service when only is nil. A caller that
// knows which reports changed (the commit's status files) compares those
// alone: at 1,000 services comparing all is most of a one-change cycle's
// message.
func BetweenIn(prev, next *render.Report, only map[string]bool) Set {
	p, n := index(prev), index(next)
	keys := slices.Collect(maps.Keys(p))
	for k := range n {
		if _, ok := p[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	set := Set{Services: []Service{}}
	for _, k := range keys {
		if only != nil && !only[k] && p[k] != nil && n[k] != nil {
			continue
		}
		if s := ServiceBetween(p[k], n[k]); !s.Empty() {
			set.Services = append(set.Services, s)
		}
	}
	set.Gateways = GatewaysBetween(prev, next)
	return set
}

func index(r *render.Report) map[string]*render.ServiceReport {
	m := map[string]*render.ServiceReport{}
	if r != nil {
		for i := range r.Services {
			s := &r.Services[i]
			m[s.Namespace+"/"+s.Name] = s
		}
	}
	return m
}

// ServiceBetween describes the change of one service; prev or next is nil
// where the service is not rendered.
func ServiceBetween(prev, next *render.ServiceReport) Service {
	either := next
	if either == nil {
		either = prev
	}
	s := Service{Namespace: either.Namespace, Name: either.Name}
	s.Gained, s.Lost = setDiff(Reaching(prev), Reaching(next))
	s.Exports = exportChanges(prev, next)
	s.Fields = fieldChanges(prev, next)
	s.Conflicts = conflictChanges(prev, next)
	s.Policies = policyChanges(prev, next)
	s.Endpoints = countChanges(prev, next)
	s.NamespaceCreated, s.NamespaceNotCreated = setDiff(created(prev), created(next))
	return s
}

func created(s *render.ServiceReport) []string {
	if s == nil {
		return nil
	}
	return s.CreatedNamespace
}

// Empty reports whether the change leaves the service alone.
func (s Service) Empty() bool {
	return len(s.Gained) == 0 && len(s.Lost) == 0 && len(s.Exports) == 0 && len(s.Fields) == 0 &&
		len(s.Conflicts) == 0 && len(s.Policies) == 0 && len(s.Endpoints) == 0 &&
		len(s.NamespaceCreated) == 0 && len(s.NamespaceNotCreated) == 0
}

// Reaching are the members that can reach the service: its importers but
// those that cannot serve any of its IP families (NotServed: they get the
// ServiceImport, marked not ready, and no endpoints), sorted.
func Reaching(s *render.ServiceReport) []string {
	if s == nil {
		return nil
	}
	if len(s.NotServed) == 0 {
		return s.ImportedBy
	}
	out := make([]string, 0, len(s.ImportedBy))
	for _, m := range s.ImportedBy {
		if !slices.ContainsFunc(s.NotServed, func(n render.NotServed) bool { return n.Member == m }) {
			out = append(out, m)
		}
	}
	return out
}

// ExportStates maps each exporting member to its export's state.
func ExportStates(s *render.ServiceReport) map[string]ExportState {
	out := map[string]ExportState{}
	if s == nil {
		return out
	}
	for _, e := range s.Exports {
		st := Valid
		if c, ok := e.Condition("Valid"); ok && c.Status != "True" {
			st = ExportState(c.Reason)
			if st == "" || st == Valid || st == NotReady {
				st = "Invalid"
			}
		} else if c, ok := e.Condition("Ready"); ok && c.Status != "True" {
			st = NotReady
			if c.Reason == string(PendingReview) {
				st = PendingReview
			}
		}
		out[e.Member] = st
	}
	return out
}

func exportChanges(prev, next *render.ServiceReport) []Export {
	p, n := ExportStates(prev), ExportStates(next)
	var out []Export
	for _, m := range unionKeys(p, n) {
		if p[m] != n[m] {
			out = append(out, Export{Member: m, Old: p[m], New: n[m]})
		}
	}
	return out
}

// conflicts maps each member whose export has Conflict=True to its reason
// and message.
func conflicts(s *render.ServiceReport) map[string][2]string {
	out := map[string][2]string{}
	if s == nil {
		return out
	}
	for _, e := range s.Exports {
		if c, ok := e.Condition("Conflict"); ok && c.Status == "True" {
			out[e.Member] = [2]string{cmp.Or(c.Reason, "Conflict"), c.Message}
		}
	}
	return out
}

func conflictChanges(prev, next *render.ServiceReport) []Conflict {
	p, n := conflicts(prev), conflicts(next)
	var out []Conflict
	for _, m := range unionKeys(p, n) {
		if p[m][0] != n[m][0] {
			out = append(out, Conflict{Member: m, Old: p[m][0], New: n[m][0], OldMessage: p[m][1], NewMessage: n[m][1]})
		}
	}
	return out
}

func policies(s *render.ServiceReport) map[string]*PolicyState {
	out := map[string]*PolicyState{}
	if s == nil {
		return out
	}
	for _, p := range s.Policies {
		out[p.Member] = &PolicyState{Mode: p.LbType, Clusters: slices.Clone(p.Clusters), Weights: maps.Clone(p.Weights)}
	}
	return out
}

func (p *PolicyState) equal(o *PolicyState) bool {
	if p == nil || o == nil {
		return p == o
	}
	return p.Mode == o.Mode && slices.Equal(p.Clusters, o.Clusters) && maps.Equal(p.Weights, o.Weights)
}

func policyChanges(prev, next *render.ServiceReport) []Policy {
	p, n := policies(prev), policies(next)
	var out []Policy
	for _, m := range unionKeys(p, n) {
		if !p[m].equal(n[m]) {
			out = append(out, Policy{Member: m, Old: p[m], New: n[m]})
		}
	}
	return out
}

func countChanges(prev, next *render.ServiceReport) []Count {
	get := func(s *render.ServiceReport) map[string]int {
		if s == nil || s.Endpoints == nil {
			return map[string]int{}
		}
		return s.Endpoints
	}
	p, n := get(prev), get(next)
	var out []Count
	for _, m := range unionKeys(p, n) {
		if p[m] != n[m] {
			out = append(out, Count{Member: m, Old: p[m], New: n[m]})
		}
	}
	return out
}

// fieldChanges compares the merged imports, when both sides have one (a
// service appearing or going is reach, not fields).
func fieldChanges(prev, next *render.ServiceReport) []Field {
	if prev == nil || next == nil || prev.Import == nil || next.Import == nil {
		return nil
	}
	a, b := fieldsOf(prev), fieldsOf(next)
	var out []Field
	for _, k := range unionKeys(a, b) {
		if a[k] != b[k] {
			out = append(out, Field{Name: k, Old: a[k], New: b[k]})
		}
	}
	slices.SortStableFunc(out, func(x, y Field) int { return cmp.Compare(fieldRank(x.Name), fieldRank(y.Name)) })
	return out
}

// fieldsOf flattens the import into named values; absent ones are "".
func fieldsOf(s *render.ServiceReport) map[string]string {
	imp := s.Import
	out := map[string]string{
		"type":                  s.Type,
		"sessionAffinity":       imp.SessionAffinity,
		"ipFamilies":            strings.Join(imp.IPFamilies, ","),
		"internalTrafficPolicy": imp.InternalTrafficPolicy,
		"trafficDistribution":   imp.TrafficDistribution,
	}
	for _, p := range imp.Ports {
		out["port "+PortKey(p)] = DescribePort(p)
	}
	for k, v := range imp.ExportedLabels {
		out["label "+k] = v
	}
	for k, v := range imp.ExportedAnnotations {
		out["annotation "+k] = v
	}
	for k, v := range out {
		if v == "" {
			delete(out, k)
		}
	}
	return out
}

// fieldRank orders fields as a reader scans an import: type, ports, the
// scalar properties, then metadata; names sort within a rank (unionKeys).
func fieldRank(name string) int {
	switch {
	case strings.HasPrefix(name, "port "):
		return 1
	case strings.HasPrefix(name, "label "):
		return 6
	case strings.HasPrefix(name, "annotation "):
		return 7
	}
	return map[string]int{"type": 0, "sessionAffinity": 2, "ipFamilies": 3, "internalTrafficPolicy": 4, "trafficDistribution": 5}[name]
}

// PortKey matches a port across two renders: its name, or its number and
// protocol when unnamed.
func PortKey(p render.ImportPort) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprintf("%d/%s", p.Port, p.Protocol)
}

// DescribePort is a port's value: "8000/TCP", with its appProtocol.
func DescribePort(p render.ImportPort) string {
	s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
	if p.AppProtocol != "" {
		s += " " + p.AppProtocol
	}
	return s
}

// setDiff returns what b adds to a and what it lacks of a, sorted.
func setDiff(a, b []string) (added, gone []string) {
	for _, x := range b {
		if !slices.Contains(a, x) {
			added = append(added, x)
		}
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			gone = append(gone, x)
		}
	}
	slices.Sort(added)
	slices.Sort(gone)
	return added, gone
}

// unionKeys are the keys of a and b, sorted, each once.
func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
