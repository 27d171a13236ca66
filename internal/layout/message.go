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

// Changes are the paths a commit changes, relative to the repository
// sub-path.
type Changes struct {
	Written, Removed []string
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool { return len(c.Written) == 0 && len(c.Removed) == 0 }

// MessageInput is what a commit message is made from.
type MessageInput struct {
	// Prev is the report of the HEAD commit (nil or empty for the first
	// commit), Next the report being committed.
	Prev, Next *render.Report
	// Changes are the paths the commit changes; used for "changed" imports
	// and when the reports alone do not say what happened.
	Changes *Changes
	// Members are the members whose state changes (joining, leaving,
	// going unreachable or stale, coming back): said first, as the cause
	// of what their exports do.
	Members []change.Member
	// Rollouts say what the staged rollouts did ("roll out web/frontend:
	// wave 2 of 3 (eu): eu-1, eu-2"): said first, as the cause of the
	// imports the wave adds.
	Rollouts []string
	// Trailers end the message, e.g. {"Snapshot-Digest", "sha256:..."}.
	Trailers [][2]string
	// ReportsFromChanges says that Changes are the commit's against the
	// commit Prev was read from, status files included, so that a
	// service whose report file is not among them has the same report on
	// both sides and is not compared (at 1,000 services, comparing all is
	// most of a one-change cycle's message).
	ReportsFromChanges bool
}

// maxSubject is the longest subject Message writes.
const maxSubject = 72

// Message writes a commit message a reviewer can act on: a subject that
// names what happened ("import httpbin/httpbin into cluster-2; conflict
// on web/api", "+N more" when it does not fit), a body listing per member
// the imports added, removed and changed, export, conflict and endpoint
// count changes and health events, then the trailers.
func Message(in MessageInput) string {
	var only map[string]bool
	if in.ReportsFromChanges && in.Changes != nil {
		only = ReportsChanged(in.Changes.Written, in.Changes.Removed)
	}
	d := diffReports(in.Prev, in.Next, in.Changes, in.Members, only)
	events := append(slices.Clone(in.Rollouts), d.events()...)
	if len(events) == 0 {
		events = fallbackEvents(in.Changes)
	}
	var b strings.Builder
	b.WriteString(subject(events))
	b.WriteString("\n")
	if len(in.Rollouts) > 0 {
		b.WriteString("\n")
		for _, r := range in.Rollouts {
			b.WriteString(r + "\n")
		}
	}
	if body := d.body(); body != "" {
		b.WriteString("\n")
		b.WriteString(body)
	}
	if len(in.Trailers) > 0 {
		b.WriteString("\n")
		for _, t := range in.Trailers {
			fmt.Fprintf(&b, "%s: %s\n", t[0], oneLine(t[1]))
		}
	}
	return b.String()
}

// subject joins events with "; " while they fit, then says how many more.
func subject(events []string) string {
	if len(events) == 0 {
		return "update the rendered tree"
	}
	s := clip(events[0], maxSubject)
	for i := 1; i < len(events); i++ {
		more := ""
		if rest := len(events) - i - 1; rest > 0 {
			more = fmt.Sprintf("; +%d more", rest)
		}
		if len(s)+2+len(events[i])+len(more) > maxSubject {
			return s + fmt.Sprintf("; +%d more", len(events)-i)
		}
		s += "; " + events[i]
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimRight(s[:n-3], " ,;") + "..."
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// fallbackEvents describe a change the reports do not show: new inputs
// that render the same, the config, or plain file counts.
func fallbackEvents(c *Changes) []string {
	if c == nil || c.Empty() {
		return nil
	}
	var inputs []string
	config, inventory := false, false
	for _, p := range append(append([]string{}, c.Written...), c.Removed...) {
		if m, ok := InputMember(p); ok {
			inputs = append(inputs, m)
		}
		config = config || p == ConfigFile
		inventory = inventory || p == InventoryFile
	}
	var ev []string
	if config {
		ev = append(ev, "update "+ConfigFile)
	}
	if inventory {
		ev = append(ev, "update "+InventoryFile)
	}
	if len(inputs) > 0 {
		sort.Strings(inputs)
		inputs = slices.Compact(inputs)
		ev = append(ev, "update snapshot of "+list(inputs))
	}
	if len(ev) == 0 {
		ev = append(ev, fmt.Sprintf("update rendered tree (%d files)", len(c.Written)+len(c.Removed)))
	}
	return ev
}

// list names up to three items, then counts.
func list(items []string) string {
	if len(items) <= 3 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:2], ", "), len(items)-2)
}
