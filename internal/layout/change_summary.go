// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/change"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// ChangeSummary is what a change does, for a person reviewing it in CI: the
// subject its commit message would have, each member's import changes,
// and the problems of the world after it. It is made by the same diff as
// the commit message, so the two never disagree.
type ChangeSummary struct {
	// Subject is the commit message's subject, Events all it summarizes
	// (the subject cuts them off with "+N more").
	Subject  string
	Events   []string
	Members  []MemberChange
	Problems []render.Problem
	// Fields says, for each service whose merged import changed, how:
	// "port http 8000/TCP -> 8001/TCP".
	Fields map[string][]string
	// Change is the model every line above is worded from; a caller that
	// knows both sides' members sets Change.Members.
	Change change.Set
}

// NewChangeSummary compares prev (nil or empty: nothing rendered yet) with next.
// Every member in members is listed, in that order, changed or not.
func NewChangeSummary(prev, next *render.Report, c *Changes, members []string) *ChangeSummary {
	d := diffReports(prev, next, c)
	r := &ChangeSummary{Members: d.memberChanges(members), Problems: next.Problems(), Fields: d.fieldChanges(), Change: d.set()}
	r.Events = d.events()
	if len(r.Events) == 0 {
		r.Events = fallbackEvents(c)
	}
	if len(r.Events) > 0 {
		r.Subject = subject(r.Events)
	}
	return r
}

// Markdown is the review as a GitHub job summary or a GitLab merge request
// note: a heading, a table of per-member counts, each member's import
// changes, then the problems. Byte-for-byte the same for the same input.
func (r *ChangeSummary) Markdown() string {
	var b strings.Builder
	subj := r.Subject
	if subj == "" {
		subj = "no change"
	}
	fmt.Fprintf(&b, "## mcs-gitops: %s\n\n", mdEscape(subj))
	if len(r.Events) > 1 {
		for _, e := range r.Events {
			fmt.Fprintf(&b, "- %s\n", mdEscape(e))
		}
		b.WriteString("\n")
	}
	perMember := map[string]int{}
	for _, p := range r.Problems {
		perMember[p.Member]++
	}
	b.WriteString("| member | imports added | imports removed | imports changed | problems |\n|---|---:|---:|---:|---:|\n")
	for _, m := range r.Members {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", m.Member, len(m.Added), len(m.Removed), len(m.Changed), perMember[m.Member])
	}
	for _, m := range r.Members {
		if m.Empty() {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", m.Member)
		for _, k := range m.Added {
			fmt.Fprintf(&b, "- import added: `%s`\n", k)
		}
		for _, k := range m.Removed {
			fmt.Fprintf(&b, "- import removed: `%s`\n", k)
		}
		for _, k := range m.Changed {
			how := ""
			if f := r.Fields[k]; len(f) > 0 {
				how = ": " + mdEscape(strings.Join(f, "; "))
			}
			fmt.Fprintf(&b, "- import changed: `%s`%s\n", k, how)
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(&b, "\n### Problems (%d)\n\n", len(r.Problems))
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "- **%s** %s\n", p.Kind, mdEscape(oneLine(p.String())))
		}
	}
	return b.String()
}

// mdEscape keeps text from a report (a condition message, a service name)
// from being read as Markdown or HTML.
func mdEscape(s string) string {
	return mdSpecial.Replace(s)
}

var mdSpecial = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "|", `\|`, "[", `\[`, "]", `\]`)
