// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// The pictures are Mermaid flowcharts, which GitHub, GitLab and Gitea
// render in Markdown: members are nodes, an edge runs from an exporter to
// a member that reaches the service through it. Beyond graphLimit edges,
// or graphMembers members, a flowchart's layout crosses edges until no
// one can follow them (Mermaid lays out one rank per hop and does not
// bundle), so SUMMARY.md gives a member-by-member matrix instead and a
// change summary leaves its picture out.
const (
	graphLimit   = 60
	graphMembers = 12
)

// edge is one arrow: exporter to importer, what it carries, how it is
// drawn.
type edge struct {
	from, to string
	style    string // "solid", "dashed" (removed), "conflict"
}

// mermaid writes a flowchart of members and labelled edges; ids are m1,
// m2, … in members order, so the text is the same for the same input.
func mermaid(members []string, edges map[edge][]string) string {
	id := map[string]string{}
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	used := map[string]bool{}
	for e := range edges {
		used[e.from], used[e.to] = true, true
	}
	for i, m := range members {
		if used[m] {
			id[m] = fmt.Sprintf("m%d", i+1)
			fmt.Fprintf(&b, "  %s[\"%s\"]\n", id[m], mermaidText(m))
		}
	}
	keys := make([]edge, 0, len(edges))
	for e := range edges {
		keys = append(keys, e)
	}
	order := func(m string) int { return slices.Index(members, m) }
	slices.SortFunc(keys, func(a, c edge) int {
		if d := order(a.from) - order(c.from); d != 0 {
			return d
		}
		if d := order(a.to) - order(c.to); d != 0 {
			return d
		}
		return strings.Compare(a.style, c.style)
	})
	for _, e := range keys {
		svcs := edges[e]
		label := svcs[0]
		if len(svcs) > 1 {
			label = fmt.Sprintf("%d services", len(svcs))
		}
		arrow := "-->"
		switch e.style {
		case "dashed":
			arrow, label = "-.->", "removed: "+label
		case "conflict":
			arrow, label = "-.-x", "conflict: "+label
		}
		fmt.Fprintf(&b, "  %s %s|\"%s\"| %s\n", id[e.from], arrow, mermaidText(label), id[e.to])
	}
	b.WriteString("```\n")
	return b.String()
}

// mermaidText keeps a name or label inside its quotes.
func mermaidText(s string) string { return mermaidSpecial.Replace(s) }

var mermaidSpecial = strings.NewReplacer(`"`, "#quot;", "\n", " ")

// eachReachEdge calls f for each of a world's edges of each service: from
// each exporter that serves it (its endpoints are counted) to each other
// member importing it.
func eachReachEdge(services []render.ServiceReport, f func(e edge, s *render.ServiceReport)) {
	for i := range services {
		s := &services[i]
		if len(s.Endpoints) == 0 {
			continue
		}
		reach := change.Reaching(s)
		for from := range s.Endpoints {
			for _, to := range reach {
				if to != from {
					f(edge{from: from, to: to, style: "solid"}, s)
				}
			}
		}
	}
}

// reachEdges are a world's edges (eachReachEdge), each with its services
// in natural order.
func reachEdges(services []render.ServiceReport) map[edge][]string {
	out := map[edge][]string{}
	eachReachEdge(services, func(e edge, s *render.ServiceReport) {
		out[e] = append(out[e], s.Namespace+"/"+s.Name)
	})
	for e := range out {
		slices.SortFunc(out[e], naturalCompare)
	}
	return out
}

// reachCounts is, per edge of reachEdges, how many services it carries:
// what the matrix needs, without the sorted lists.
func reachCounts(services []render.ServiceReport) map[edge]int {
	out := map[edge]int{}
	eachReachEdge(services, func(e edge, _ *render.ServiceReport) { out[e]++ })
	return out
}

// reachPicture is SUMMARY.md's picture of the whole ClusterSet, or, past
// the limits, the matrix of how many services each member reaches through
// each exporter.
func reachPicture(b *strings.Builder, services []render.ServiceReport, members []string) {
	if len(members) <= graphMembers {
		if edges := reachEdges(services); len(edges) > 0 && len(edges) <= graphLimit {
			b.WriteString("\n")
			b.WriteString(mermaid(members, edges))
			return
		}
	}
	edges := reachCounts(services)
	if len(edges) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%d members, %d exporter-to-member paths: past %d paths or %d members a graph crosses its edges until it cannot be read, so here is the matrix (row: the member that reaches, column: the exporter, cell: how many services).\n\n",
		len(members), len(edges), graphLimit, graphMembers)
	b.WriteString("| reaches \\ through |")
	for _, m := range members {
		b.WriteString(" " + m + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(members)) + "\n")
	for _, to := range members {
		b.WriteString("| " + to + " |")
		for _, from := range members {
			n := edges[edge{from: from, to: to, style: "solid"}]
			cell := ""
			if n > 0 {
				cell = fmt.Sprint(n)
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
}

// changeEdges are the edges a change adds (solid), removes (dashed) or
// breaks with a conflict: a member gaining or losing an import, through
// each exporter serving it; an exporter that starts, stops or can no longer
// serve (its ports lost a conflict) an import others keep.
func (d *reportDiff) changeEdges() map[edge][]string {
	out := map[edge][]string{}
	add := func(from, to, style, key string) {
		if from == to {
			return
		}
		e := edge{from: from, to: to, style: style}
		if !slices.Contains(out[e], key) {
			out[e] = append(out[e], key)
		}
	}
	serving := func(s *render.ServiceReport) []string {
		if s == nil {
			return nil
		}
		var out []string
		for m := range s.Endpoints {
			out = append(out, m)
		}
		slices.Sort(out)
		return out
	}
	for _, s := range d.services {
		for _, to := range s.importsAdded {
			for _, from := range serving(s.next) {
				add(from, to, "solid", s.key)
			}
		}
		for _, to := range s.importsGone {
			for _, from := range serving(s.prev) {
				add(from, to, "dashed", s.key)
			}
		}
		reach := change.Reaching(s.next)
		kept := func(to string) bool { return !slices.Contains(s.importsAdded, to) }
		for _, from := range s.change.ExportersAdded() {
			for _, to := range reach {
				if kept(to) {
					add(from, to, "solid", s.key)
				}
			}
		}
		for _, from := range s.stopped {
			for _, to := range reach {
				add(from, to, "conflict", s.key)
			}
		}
		for _, from := range slices.Concat(s.exportsGone, s.dropped) {
			for _, to := range reach {
				add(from, to, "dashed", s.key)
			}
		}
	}
	for e := range out {
		slices.SortFunc(out[e], naturalCompare)
	}
	return out
}
