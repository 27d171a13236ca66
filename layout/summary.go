package layout

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/render"
)

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
	for _, s := range r.Services {
		var exporters []string
		for _, e := range s.Exports {
			mark := ""
			problem := func(c render.Condition, m string) {
				mark += m
				problems = append(problems, fmt.Sprintf("%s/%s from %s: %s: %s", s.Namespace, s.Name, e.Member, c.Reason, c.Message))
			}
			if c, ok := e.Condition("Valid"); ok && c.Status != "True" {
				problem(c, " (invalid)")
			} else {
				if c, ok := e.Condition("Conflict"); ok && c.Status == "True" {
					problem(c, " (conflict)")
				}
				if c, ok := e.Condition("Ready"); ok && c.Status != "True" {
					problem(c, " (not ready)")
				}
			}
			exporters = append(exporters, e.Member+mark)
		}
		for _, m := range s.MissingNamespace {
			problems = append(problems, fmt.Sprintf("%s/%s: namespace %s does not exist in %s", s.Namespace, s.Name, s.Namespace, m))
		}
		for _, w := range s.Warnings {
			problems = append(problems, fmt.Sprintf("%s/%s: %s", s.Namespace, s.Name, w))
		}
		for _, p := range s.Policies {
			if c, _ := p.Condition("Applied"); c.Status != "True" {
				problems = append(problems, fmt.Sprintf("%s/%s: %s policy in %s: %s: %s", s.Namespace, s.Name, p.LbType, p.Member, c.Reason, c.Message))
			}
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
