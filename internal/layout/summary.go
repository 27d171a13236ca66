// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// exportMarks follow an exporter's name in the table for the problems of
// its export.
var exportMarks = map[render.ProblemKind]string{
	render.ProblemInvalid:  "invalid",
	render.ProblemConflict: "conflict",
	render.ProblemNotReady: "not ready",
}

// Summary is status/SUMMARY.md: the report for a person reviewing a commit.
func Summary(r *render.Report) string {
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
		members := make([]string, 0, len(s.Endpoints))
		for m := range s.Endpoints {
			members = append(members, m)
		}
		sort.Strings(members)
		var eps []string
		for _, m := range members {
			eps = append(eps, fmt.Sprintf("%s: %d", m, s.Endpoints[m]))
		}
		typ := s.Type
		if typ == "" {
			typ = "not imported"
		}
		fmt.Fprintf(&b, "| %s/%s | %s | %s | %s | %s |\n", s.Namespace, s.Name, typ,
			strings.Join(exporters, ", "), strings.Join(s.ImportedBy, ", "), strings.Join(eps, ", "))
	}
	if len(problems) > 0 {
		b.WriteString("\n## Problems\n\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
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
	kind render.ProblemKind
	text string
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
		out = append(out, problemItem{p.Kind, p.String()})
		if _, export := exportMarks[p.Kind]; export {
			last, lastMember = len(out)-1, p.Member
		} else {
			last = -1
		}
	}
	return out
}
