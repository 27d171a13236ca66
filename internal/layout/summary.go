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
	render.ProblemInvalid:  " (invalid)",
	render.ProblemConflict: " (conflict)",
	render.ProblemNotReady: " (not ready)",
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
		marks := map[string]string{}
		for _, p := range s.Problems() {
			problems = append(problems, p.String())
			if mark, ok := exportMarks[p.Kind]; ok {
				marks[p.Member] += mark
			}
		}
		exporters := make([]string, 0, len(s.Exports))
		for _, e := range s.Exports {
			exporters = append(exporters, e.Member+marks[e.Member])
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
