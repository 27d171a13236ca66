// SPDX-License-Identifier: Apache-2.0

package propose

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/review"
)

// This file is what a proposal says: the request's title, body and
// labels, and its commit message.

// Labels are the labels of p's request.
func Labels(p *review.Proposal) []string {
	out := []string{"mcs-gitops"}
	for _, k := range p.Kinds {
		out = append(out, "review/"+string(k))
	}
	slices.Sort(out)
	return out
}

// A request's text must fit what every forge takes, and be kept by it as
// sent: the loop compares the request with what it would send and edits
// it when they differ. GitLab and Gitea take titles of 255 characters and
// GitHub 256, and Gitea cuts a longer one to 255 bytes with an ellipsis
// (so the loop would edit it again at every commit); the others refuse
// it. GitHub takes bodies of 65,536 characters. The bounds are in bytes,
// so they hold for any text.
const (
	maxTitle = 255
	maxBody  = 60000
)

// cutMark ends a cut title.
const cutMark = "..."

// Title is p's request title, cut to what every forge keeps as sent.
func Title(p *review.Proposal) string {
	title := "mcs-gitops: " + p.Name
	if len(p.Summary) > 0 {
		title += ": " + p.Summary[0]
		if n := len(p.Summary) - 1; n > 0 {
			title += fmt.Sprintf(" (+%d more)", n)
		}
	}
	if len(title) <= maxTitle {
		return title
	}
	cut := maxTitle - len(cutMark)
	for cut > 0 && !utf8.RuneStart(title[cut]) {
		cut--
	}
	return title[:cut] + cutMark
}

// Message is the commit message of p's commit; its Proposal trailer
// names the proposal (how the loop knows its own commits).
func Message(p *review.Proposal) string {
	msg := Title(p) + "\n\n"
	for _, s := range p.Summary {
		msg += "- " + s + "\n"
	}
	msg += trailer + p.Name + "\nProposal-Digest: " + p.Digest + "\n"
	return msg
}

// trailer starts the line of a proposal's commit message that names it.
const trailer = "\nProposal: "

// Named is the proposal a commit message names in its Proposal trailer
// (Message writes it), "" when it names none: how the loop tells its own
// proposal commits, and a proposal merged on the forge, from others.
func Named(message string) string {
	_, rest, ok := strings.Cut(message, trailer)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "\n")
	return name
}

// Body is p's request body: what it holds, what it does to who can reach
// what (effect, the change model's view of the branch's render against
// p's: gained and lost reach, changed fields, policies, the picture,
// problems) and, per member, the rendered files it adds, removes or
// changes against the branch (branch and proposal are the two trees);
// cut to what every forge keeps as sent.
func Body(p *review.Proposal, effect *layout.ChangeSummary, branch, proposal map[string][]byte) string {
	head := "This proposal was opened by mcs-gitops review mode. It holds a change to who can reach what, rendered on top of the branch it goes into.\n\n"
	head += "**Kinds:** " + joinKinds(p.Kinds) + "\n\n**What it holds:**\n\n"
	tail := "\n**Merging** applies it to every member. **Closing** it without merging rejects it: mcs-gitops records the rejection and does not propose the same change again until the exports change. Endpoint churn on the target branch is rebased into this branch by mcs-gitops; edit the rendered files here only to override (docs/review-mode.md).\n\n"
	tail += fmt.Sprintf("<!-- mcs-gitops proposal %s digest %s -->\n", p.Name, p.Digest)
	// What it holds gets a quarter of the room, the effect half of what
	// is left; the file list, which the diff tab has in full, the rest.
	room := maxBody - len(head) - len(tail)
	var holds strings.Builder
	for _, s := range p.Summary {
		holds.WriteString("- " + s + "\n")
	}
	head += cutLines(holds.String(), room/4) + "\n"
	room = maxBody - len(head) - len(tail)
	var what string
	if effect != nil {
		what = effect.SectionWithin(room/2, "### What it does to who can reach what") + "\n"
	}
	const open = "<details><summary>Rendered changes, per member</summary>\n\n(`+` added, `-` removed, `~` changed; the diff tab has the content)\n\n"
	const closing = "\n</details>\n"
	list := cutLines(renderedChanges(branch, proposal), room-len(what)-len(open)-len(closing))
	return head + what + open + list + closing + tail
}

// cutNote ends lists cut to fit.
const cutNote = "- … the rest is cut to fit the forge's limit on a request's text; the diff tab has every change\n"

// cutLines is s when it fits in limit bytes, else its first whole lines
// that fit with cutNote after them.
func cutLines(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = s[:max(limit-len(cutNote), 0)]
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1] + cutNote
	}
	return cutNote
}

func joinKinds(ks []review.Kind) string { return strings.Join(KindNames(ks), ", ") }

// maxChangeLines bounds the file list of one member in a request's body;
// the forge's diff has the rest.
const maxChangeLines = 40

// renderedChanges lists, per member, the files under clusters/<member>/
// a proposal adds, removes or changes against the branch.
func renderedChanges(branch, proposal map[string][]byte) string {
	lines := map[string][]string{}
	add := func(p, mark string) {
		rest, ok := strings.CutPrefix(p, layout.ClustersDir+"/")
		if !ok {
			return
		}
		member, file, ok := strings.Cut(rest, "/")
		if !ok || file == "kustomization.yaml" {
			return
		}
		lines[member] = append(lines[member], mark+" "+file)
	}
	for p, b := range proposal {
		old, ok := branch[p]
		switch {
		case !ok:
			add(p, "+")
		case !bytes.Equal(old, b):
			add(p, "~")
		}
	}
	for p := range branch {
		if _, ok := proposal[p]; !ok {
			add(p, "-")
		}
	}
	if len(lines) == 0 {
		return "(no member's objects change: the change is in status/ only)\n"
	}
	var out strings.Builder
	for _, m := range slices.Sorted(maps.Keys(lines)) {
		ls := lines[m]
		slices.SortFunc(ls, func(a, b string) int { return strings.Compare(a[2:], b[2:]) })
		fmt.Fprintf(&out, "- `%s`:\n", m)
		for i, l := range ls {
			if i == maxChangeLines {
				fmt.Fprintf(&out, "  - ... and %d more\n", len(ls)-maxChangeLines)
				break
			}
			fmt.Fprintf(&out, "  - `%s`\n", l)
		}
	}
	return out.String()
}
