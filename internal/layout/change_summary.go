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

// ChangeEvents are the events a summary of the change from prev to next
// lists, without the rest of it (tables, picture, problems): what status
// says of a service's last change.
func ChangeEvents(prev, next *render.Report) []string {
	return diffReports(prev, next, nil, nil, nil).events()
}

// NewChangeSummaryOf is NewChangeSummary for a caller that also knows
// how members change (changes: joining, leaving, going stale …), which
// are said first, as the cause of what their exports do.
func NewChangeSummaryOf(prev, next *render.Report, c *Changes, members []string, changes []change.Member) *ChangeSummary {
	d := diffReports(prev, next, c, changes, nil)
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
	if len(r.Events) > glanceFrom {
		b.WriteString(r.glance() + "\n\n")
	}
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
	// Members whose imports change the same way are listed once, as one
	// group (at 20 members a change to everyone is one list, not twenty).
	// Many groups, or long lists: each group folds, so the page stays
	// readable and a reviewer opens the ones they own.
	groups := sameChanges(r.Members)
	items := 0
	for _, g := range groups {
		items += len(g.Added) + len(g.Removed) + len(g.Changed)
	}
	fold := len(groups) > 3 || items > 30
	for _, g := range groups {
		if !details {
			break
		}
		name := g.Member
		switch {
		case len(g.names) > 4:
			name = fmt.Sprintf("%s (%d members, the same in each)", listNames(g.names, 4), len(g.names))
		case len(g.names) > 1:
			name = strings.Join(g.names, ", ") + " (the same in each)"
		}
		if fold {
			fmt.Fprintf(&b, "\n<details><summary>%s: %d added, %d removed, %d changed</summary>\n\n",
				mdEscape(name), len(g.Added), len(g.Removed), len(g.Changed))
		} else {
			fmt.Fprintf(&b, "\n### %s\n\n", name)
		}
		var lines []string
		for _, k := range g.Added {
			lines = append(lines, fmt.Sprintf("- import added: `%s`", k))
		}
		for _, k := range g.Removed {
			lines = append(lines, fmt.Sprintf("- import removed: `%s`", k))
		}
		for _, k := range g.Changed {
			lines = append(lines, fmt.Sprintf("- import changed: `%s`", k))
		}
		for _, l := range capped(lines, per) {
			b.WriteString(l + "\n")
		}
		more(&b, len(lines), per, "imports of "+g.Member)
		if fold {
			b.WriteString("\n</details>\n")
		}
	}
	if !details && len(groups) > 0 {
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

// glanceFrom is how many events a change has before its summary opens
// with totals: past it, the list is cut long before it ends.
const glanceFrom = 10

// glance is the change in totals, one line: how many services become
// reachable from more or fewer members (and how many member-service
// pairs that is), change their import, conflict, reroute.
func (r *ChangeSummary) glance() string {
	var gained, lost, gainedPairs, lostPairs, fields, conflicts, policies int
	for _, s := range r.Change.Services {
		if len(s.Gained) > 0 {
			gained++
			gainedPairs += len(s.Gained)
		}
		if len(s.Lost) > 0 {
			lost++
			lostPairs += len(s.Lost)
		}
		if len(s.Fields) > 0 {
			fields++
		}
		if slices.ContainsFunc(s.Conflicts, func(c change.Conflict) bool { return c.Old == "" }) {
			conflicts++
		}
		if len(s.Policies) > 0 {
			policies++
		}
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf(what, n))
		}
	}
	if gained > 0 {
		parts = append(parts, fmt.Sprintf("%d services reachable from more members (%d member-service pairs)", gained, gainedPairs))
	}
	if lost > 0 {
		parts = append(parts, fmt.Sprintf("%d services reachable from fewer members (%d member-service pairs withdrawn)", lost, lostPairs))
	}
	add(fields, "%d imports changed")
	add(conflicts, "%d services with a new conflict")
	add(policies, "%d services rerouted by a traffic policy")
	add(len(r.Change.Members), "%d members changed")
	add(len(r.Change.Gateways), "%d gateway changes")
	if len(parts) == 0 {
		return fmt.Sprintf("**In all:** %d changes", len(r.Events))
	}
	return "**In all:** " + strings.Join(parts, "; ") + "."
}

// memberGroup is the members whose imports change the same way.
type memberGroup struct {
	MemberChange
	names []string
}

// sameChanges groups the members that change, in order of their first
// member, by what changes in their imports.
func sameChanges(members []MemberChange) []memberGroup {
	var out []memberGroup
	at := map[string]int{}
	for _, m := range members {
		if m.Empty() {
			continue
		}
		key := strings.Join(m.Added, ",") + "|" + strings.Join(m.Removed, ",") + "|" + strings.Join(m.Changed, ",")
		if i, ok := at[key]; ok {
			out[i].names = append(out[i].names, m.Member)
			continue
		}
		at[key] = len(out)
		out = append(out, memberGroup{MemberChange: m, names: []string{m.Member}})
	}
	return out
}

// listNames is names, the first n of them and how many more.
func listNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
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
