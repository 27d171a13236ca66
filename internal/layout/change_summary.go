// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"maps"
	"slices"
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
	// Change is the model every line above is worded from.
	Change change.Set
	// policies are how traffic policies change, one line each; problems
	// are the problems as SUMMARY.md words them (problemLines: a conflict
	// once, on the losing export).
	policies   []string
	namespaces []string
	gateways   []string
	problems   []problemItem
	// picture is the Mermaid flowchart of the edges the change adds,
	// removes or breaks; empty when none, or past graphLimit.
	picture string
}

// NewChangeSummary compares prev (nil or empty: nothing rendered yet) with next.
// Every member in members is listed, in that order, changed or not.
func NewChangeSummary(prev, next *render.Report, c *Changes, members []string) *ChangeSummary {
	return NewChangeSummaryOf(prev, next, c, members, nil)
}

// NewChangeSummaryOf is NewChangeSummary for a caller that also knows
// how members change (changes: joining, leaving, going stale …), which
// are said first, as the cause of what their exports do.
func NewChangeSummaryOf(prev, next *render.Report, c *Changes, members []string, changes []change.Member) *ChangeSummary {
	d := diffReports(prev, next, c, changes)
	r := &ChangeSummary{Members: d.memberChanges(members), Problems: next.Problems(), Fields: d.fieldChanges(), Change: d.set()}
	r.Change.Members = changes
	for _, s := range d.services {
		for _, p := range s.policies {
			r.policies = append(r.policies, s.key+" in "+p)
		}
	}
	if next != nil {
		for _, s := range next.Services {
			r.problems = append(r.problems, problemItems(s)...)
		}
	}
	r.namespaces = d.namespaceLines()
	r.gateways = d.gatewayLines()
	if edges := d.changeEdges(); len(edges) > 0 && len(edges) <= graphLimit {
		order := slices.Clone(members)
		for e := range edges {
			for _, m := range []string{e.from, e.to} {
				if !slices.Contains(order, m) {
					order = append(order, m)
				}
			}
		}
		r.picture = mermaid(order, edges)
	}
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
// changes, then the problems; within StepSummaryLimit. Byte-for-byte the
// same for the same input.
func (r *ChangeSummary) Markdown() string { return r.MarkdownWithin(StepSummaryLimit) }

// Limits a summary keeps below: GitHub refuses a job's step summary over
// 1 MiB and a pull request comment over 65,536 characters; each leaves
// room for what else the step or comment holds.
const (
	StepSummaryLimit = 1<<20 - 64<<10
	CommentLimit     = 65536 - 2048
)

// MarkdownWithin is Markdown in at most limit bytes: long lists are cut to
// their first items with a line saying how many more there are, shorter
// each try, and at the last only the heading and the per-member table
// (itself cut) are left. A change of a few services reads the same
// whatever the limit.
func (r *ChangeSummary) MarkdownWithin(limit int) string {
	subj := r.Subject
	if subj == "" {
		subj = "no change"
	}
	return r.within(limit, "## mcs-gitops: "+mdEscape(subj)+"\n\n", 2)
}

// SectionWithin is MarkdownWithin under heading instead of the subject
// (so every event is listed, even a single one), for a page whose title
// says what it is (a review-mode pull request).
func (r *ChangeSummary) SectionWithin(limit int, heading string) string {
	return r.within(limit, heading+"\n\n", 1)
}

// within is the summary under heading in at most limit bytes; the events
// are listed when there are at least list of them.
func (r *ChangeSummary) within(limit int, heading string, list int) string {
	var md string
	for _, per := range []int{0, 200, 50, 10, 3} {
		if md = r.markdown(heading, list, per, true); len(md) <= limit {
			return md
		}
	}
	md = r.markdown(heading, list, 3, false)
	if len(md) > limit {
		md = md[:limit-len(cutNote)]
		md = md[:strings.LastIndexByte(md, '\n')+1] + cutNote
	}
	return md
}

const cutNote = "\n… cut to fit; `mcs-gitops diff -o json` has all of it\n"

// markdown writes the summary under heading with each list cut to per items (0: none
// cut); details false leaves out each member's list.
func (r *ChangeSummary) markdown(heading string, list, per int, details bool) string {
	var b strings.Builder
	b.WriteString(heading)
	if len(r.Events) >= list {
		for _, e := range capped(r.Events, per) {
			fmt.Fprintf(&b, "- %s\n", mdEscape(e))
		}
		more(&b, len(r.Events), per, "events")
		b.WriteString("\n")
	}
	// Counted as listed below: a conflict once, on the losing export.
	perMember := map[string]int{}
	for _, p := range r.problems {
		perMember[p.member]++
	}
	b.WriteString("| member | imports added | imports removed | imports changed | problems |\n|---|---:|---:|---:|---:|\n")
	for _, m := range r.Members {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", m.Member, len(m.Added), len(m.Removed), len(m.Changed), perMember[m.Member])
	}
	if r.picture != "" && details {
		b.WriteString("\n")
		b.WriteString(r.picture)
	}
	// What changed in an import is the same in every importer: said once.
	if len(r.Fields) > 0 {
		b.WriteString("\n### Changed imports\n\n")
		var lines []string
		for _, k := range slices.Sorted(maps.Keys(r.Fields)) {
			lines = append(lines, fmt.Sprintf("- `%s`: %s", k, mdEscape(strings.Join(r.Fields[k], "; "))))
		}
		for _, l := range capped(lines, per) {
			b.WriteString(l + "\n")
		}
		more(&b, len(lines), per, "changed imports")
	}
	if len(r.namespaces) > 0 {
		b.WriteString("\n### Namespaces that will be created\n\n")
		for _, l := range capped(r.namespaces, per) {
			ns, m, _ := strings.Cut(l, " in ")
			fmt.Fprintf(&b, "- `%s` in %s\n", ns, mdEscape(m))
		}
		more(&b, len(r.namespaces), per, "namespaces")
	}
	if len(r.policies) > 0 {
		b.WriteString("\n### Traffic policies\n\n")
		for _, l := range capped(r.policies, per) {
			fmt.Fprintf(&b, "- %s\n", mdEscape(l))
		}
		more(&b, len(r.policies), per, "policy changes")
	}
	if len(r.gateways) > 0 {
		b.WriteString("\n### Gateways\n\n")
		for _, l := range capped(r.gateways, per) {
			fmt.Fprintf(&b, "- %s\n", mdEscape(l))
		}
		more(&b, len(r.gateways), per, "gateway changes")
	}
	if len(r.Change.Members) > 0 {
		b.WriteString("\n### Members\n\n")
		for _, m := range r.Change.Members {
			fmt.Fprintf(&b, "- %s\n", mdEscape(m.String()))
		}
	}
	// Many members, or long lists: each member folds, so the page stays
	// readable and a reviewer opens the ones they own.
	changed, items := 0, 0
	for _, m := range r.Members {
		if !m.Empty() {
			changed++
			items += len(m.Added) + len(m.Removed) + len(m.Changed)
		}
	}
	fold := changed > 3 || items > 30
	for _, m := range r.Members {
		if m.Empty() || !details {
			continue
		}
		if fold {
			fmt.Fprintf(&b, "\n<details><summary>%s: %d added, %d removed, %d changed</summary>\n\n",
				mdEscape(m.Member), len(m.Added), len(m.Removed), len(m.Changed))
		} else {
			fmt.Fprintf(&b, "\n### %s\n\n", m.Member)
		}
		var lines []string
		for _, k := range m.Added {
			lines = append(lines, fmt.Sprintf("- import added: `%s`", k))
		}
		for _, k := range m.Removed {
			lines = append(lines, fmt.Sprintf("- import removed: `%s`", k))
		}
		for _, k := range m.Changed {
			lines = append(lines, fmt.Sprintf("- import changed: `%s`", k))
		}
		for _, l := range capped(lines, per) {
			b.WriteString(l + "\n")
		}
		more(&b, len(lines), per, "imports of "+m.Member)
		if fold {
			b.WriteString("\n</details>\n")
		}
	}
	if !details && changed > 0 {
		b.WriteString("\nEach member's imports are left out to fit; `mcs-gitops diff -o json` lists them.\n")
	}
	if len(r.problems) > 0 {
		fmt.Fprintf(&b, "\n### Problems (%d)\n\n", len(r.problems))
		lines := make([]string, 0, len(r.problems))
		for _, p := range r.problems {
			lines = append(lines, fmt.Sprintf("- **%s** %s", p.kind, mdEscape(oneLine(p.text))))
		}
		for _, l := range capped(lines, per) {
			b.WriteString(l + "\n")
		}
		more(&b, len(lines), per, "problems")
	}
	return b.String()
}

// capped is the first per items of l (all of them when per is 0).
func capped(l []string, per int) []string {
	if per > 0 && len(l) > per {
		return l[:per]
	}
	return l
}

// more says how many items capped left out.
func more(b *strings.Builder, n, per int, what string) {
	if per > 0 && n > per {
		fmt.Fprintf(b, "- … and %d more %s\n", n-per, what)
	}
}

// mdEscape keeps text from a report (a condition message, a service name)
// from being read as Markdown or HTML.
func mdEscape(s string) string {
	return mdSpecial.Replace(s)
}

var mdSpecial = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "|", `\|`, "[", `\[`, "]", `\]`)
