// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// exportMarks follow an exporter's name in the table for the problems of
// its export.
var exportMarks = map[render.ProblemKind]string{
	render.ProblemInvalid:  "invalid",
	render.ProblemConflict: "conflict",
	render.ProblemNotReady: "not ready",
}

// Summary is status/SUMMARY.md: the report for a person reviewing a
// commit. members are the ClusterSet's, in config order.
func Summary(r *render.Report, members []string) string {
	var b strings.Builder
	b.WriteString("# Multi-cluster services\n\n")
	b.WriteString("Rendered by mcs-gitops; edits are overwritten.\n\n")
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "- warning: %s\n", w)
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
	}
	var problems []string
	b.WriteString("| service | type | exported by | imported by | ready endpoints |\n|---|---|---|---|---|\n")
	// Natural order for a person: svc2 before svc10.
	services := slices.Clone(r.Services)
	slices.SortStableFunc(services, func(x, y render.ServiceReport) int {
		if c := naturalCompare(x.Namespace, y.Namespace); c != 0 {
			return c
		}
		return naturalCompare(x.Name, y.Name)
	})
	for _, s := range services {
		marks := map[string][]string{}
		for _, p := range s.Problems() {
			if mark, ok := exportMarks[p.Kind]; ok {
				marks[p.Member] = append(marks[p.Member], mark)
			}
		}
		problems = append(problems, problemLines(s)...)
		exporters := make([]string, 0, len(s.Exports))
		for _, e := range s.Exports {
			name := e.Member
			if m := marks[e.Member]; len(m) > 0 {
				name += " (" + strings.Join(m, ", ") + ")"
			}
			exporters = append(exporters, name)
		}
		contributors := make([]string, 0, len(s.Endpoints))
		for m := range s.Endpoints {
			contributors = append(contributors, m)
		}
		sort.Strings(contributors)
		var eps []string
		for _, m := range contributors {
			eps = append(eps, fmt.Sprintf("%s: %d", m, s.Endpoints[m]))
		}
		typ := s.Type
		if typ == "" {
			typ = "not imported"
		}
		fmt.Fprintf(&b, "| %s/%s | %s | %s | %s | %s |\n", s.Namespace, s.Name, typ,
			strings.Join(exporters, ", "), importerList(s, members), strings.Join(eps, ", "))
	}
	reachTable(&b, services, members)
	reachPicture(&b, services, members)
	policyTable(&b, services)
	gatewayTable(&b, r.Gateways)
	if len(problems) > 0 {
		b.WriteString("\n## Problems\n\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

// policyTable lists the GlobalTrafficPolicies: where each consumer's
// traffic to the service goes (its order, or its weights), and whether
// it is applied.
func policyTable(b *strings.Builder, services []render.ServiceReport) {
	var rows []string
	for _, s := range services {
		for _, p := range s.Policies {
			applied := "yes"
			if c, ok := conditionOf(p.Conditions, "Applied"); !ok || c.Status != "True" {
				applied = "no"
				if ok && c.Reason != "" {
					applied += " (" + c.Reason + ")"
				}
			}
			rows = append(rows, fmt.Sprintf("| %s/%s | %s | %s | %s |", s.Namespace, s.Name, p.Member,
				policyState(&change.PolicyState{Mode: p.LbType, Clusters: p.Clusters, Weights: p.Weights}), applied))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Traffic policies\n\n| service | consumer | sends traffic to | applied |\n|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
}

// gatewayTable lists the members' gateways: where the others reach each
// (gateway mode), and how many TCP listener ports it has given out.
func gatewayTable(b *strings.Builder, gws []render.GatewayReport) {
	if len(gws) == 0 {
		return
	}
	b.WriteString("\n## Gateways\n\n| member | gateway | addresses | HTTP port | TCP ports | listeners |\n|---|---|---|---:|---|---:|\n")
	for _, g := range gws {
		tcp := g.TCPPorts
		if tcp == "" {
			tcp = "none"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %d |\n", g.Member, g.Gateway, strings.Join(g.Addresses, ", "), g.HTTPPort, tcp, len(g.Allocations))
	}
}

func conditionOf(cs []render.Condition, t string) (render.Condition, bool) {
	for _, c := range cs {
		if c.Type == t {
			return c, true
		}
	}
	return render.Condition{}, false
}

// problemLines are a service's problems as SUMMARY.md lists them: one
// line per export, its Conflict and Ready=False joined. The winner of a
// conflict has Conflict=True too (KEP-1645 puts it on every export), but
// each losing export's line names the winner and what it lost, so the
// winner's line would say every conflict a second time and is left out.
func problemLines(s render.ServiceReport) []string {
	var out []string
	for _, it := range problemItems(s) {
		out = append(out, it.text)
	}
	return out
}

// problemItem is one line of problemLines and the kind of the problem it
// starts with.
type problemItem struct {
	kind   render.ProblemKind
	member string
	text   string
}

func problemItems(s render.ServiceReport) []problemItem {
	probs := s.Problems()
	losers := 0
	for _, p := range probs {
		if p.Kind == render.ProblemConflict && p.Member != s.Winner {
			losers++
		}
	}
	var out []problemItem
	last := -1 // index in out of the last export problem line, and its member
	lastMember := ""
	for _, p := range probs {
		switch {
		case p.Kind == render.ProblemConflict && p.Member == s.Winner && losers > 0:
			continue
		case p.Kind == render.ProblemNotReady && last == len(out)-1 && last >= 0 && lastMember == p.Member:
			out[last].text += fmt.Sprintf("; %s: %s", p.Reason, p.Message)
			continue
		}
		out = append(out, problemItem{p.Kind, p.Member, p.String()})
		if _, export := exportMarks[p.Kind]; export {
			last, lastMember = len(out)-1, p.Member
		} else {
			last = -1
		}
	}
	return out
}

// shortFrom is the member count from which "imported by" says "all N
// members" or "all but …" rather than every name: at 20 members, every
// row listing 20 names hides the one that is missing.
const shortFrom = 5

// importerList is a row's "imported by": the names, or for a large
// ClusterSet "all N members" / "all but a, b"; a member whose namespace
// the render creates is marked; the members the reach policy keeps out,
// and those a staged rollout has not reached yet, follow.
func importerList(s render.ServiceReport, members []string) string {
	list := importerNames(s, members)
	if len(s.OutOfReach) == 0 && len(s.Behind) == 0 {
		return list
	}
	if list == "" {
		list = "none"
	}
	if len(s.OutOfReach) > 0 {
		out := make([]string, len(s.OutOfReach))
		for i, o := range s.OutOfReach {
			out[i] = o.Member
		}
		list += "; out of reach: " + strings.Join(out, ", ")
	}
	if len(s.Behind) > 0 {
		list += "; rollout not yet in: " + strings.Join(s.Behind, ", ")
	}
	return list
}

// importerNames is importerList without the members out of reach.
func importerNames(s render.ServiceReport, members []string) string {
	created := map[string]bool{}
	for _, m := range s.CreatedNamespace {
		created[m] = true
	}
	notServed := map[string]bool{}
	for _, n := range s.NotServed {
		notServed[n.Member] = true
	}
	mark := func(m string) string {
		switch {
		case notServed[m]:
			return m + " (not served: no IP family in common)"
		case created[m]:
			return m + " (namespace will be created)"
		}
		return m
	}
	if len(members) >= shortFrom && len(s.ImportedBy) > len(members)/2 {
		imported := make(map[string]bool, len(s.ImportedBy))
		for _, m := range s.ImportedBy {
			imported[m] = true
		}
		var missing []string
		for _, m := range members {
			if !imported[m] {
				missing = append(missing, m)
			}
		}
		head := fmt.Sprintf("all %d members", len(members))
		if len(missing) > 0 {
			head = "all but " + strings.Join(missing, ", ")
		}
		var marked []string
		for _, m := range s.ImportedBy {
			if created[m] || notServed[m] {
				marked = append(marked, mark(m))
			}
		}
		if len(marked) > 0 {
			head += "; " + strings.Join(marked, ", ")
		}
		return head
	}
	out := make([]string, len(s.ImportedBy))
	for i, m := range s.ImportedBy {
		out[i] = mark(m)
	}
	return strings.Join(out, ", ")
}

// reachTable is the per-member view: how many services each member can
// reach, and through which exporters (a service with several counts for
// each); a member's own exports included. Left out for a ClusterSet of
// one member, where it says nothing the table above does not.
func reachTable(b *strings.Builder, services []render.ServiceReport, members []string) {
	if len(members) < 2 || len(services) == 0 {
		return
	}
	b.WriteString("\n## What each member can reach\n\n| member | services | from |\n|---|---:|---|\n")
	// Counted service by service: member by member, each asking every
	// service, was 10 million steps at 100 members x 1,000 services.
	n := map[string]int{}
	from := map[string]map[string]int{}
	for i := range services {
		s := &services[i]
		for _, m := range change.Reaching(s) {
			n[m]++
			if len(s.Endpoints) == 0 {
				continue
			}
			if from[m] == nil {
				from[m] = map[string]int{}
			}
			for e := range s.Endpoints {
				from[m][e]++
			}
		}
	}
	for _, m := range members {
		var parts []string
		for _, e := range members {
			if c := from[m][e]; c > 0 {
				parts = append(parts, fmt.Sprintf("%s (%d)", e, c))
			}
		}
		fmt.Fprintf(b, "| %s | %d | %s |\n", m, n[m], strings.Join(parts, ", "))
	}
}
