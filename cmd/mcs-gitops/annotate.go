// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// locator finds where, in the files a person edits, the object a problem
// or change is about was read: each member's snapshot positions.
type locator map[string]map[string]snapshot.Position

func locate(snaps []*snapshot.Snapshot) locator {
	l := locator{}
	for _, s := range snaps {
		l[s.Member] = s.Positions
	}
	return l
}

// at is where member's kind ns/name was read; a file named as diff --base
// names it, "rev:path", is the path in the checkout.
func (l locator) at(member, kind, ns, name string) (snapshot.Position, bool) {
	pos, ok := l[member][snapshot.ObjectRef(kind, ns, name)]
	if !ok {
		return pos, false
	}
	pos.File = checkoutPath(pos.File)
	return pos, true
}

// checkoutPath is the path in the checkout of a file diff --base names as
// git show takes it, "rev:path"; a path without a revision is itself.
func checkoutPath(file string) string {
	if _, path, found := strings.Cut(file, ":"); found {
		return path
	}
	return file
}

// annotation is one GitHub Actions workflow command: a line the runner
// turns into an error, warning or notice on the pull request, on the file
// and line when known.
type annotation struct {
	level, title, message string
	pos                   snapshot.Position
}

func (a annotation) String() string {
	var props []string
	if a.pos.File != "" && a.pos.File != "stdin" {
		props = append(props, "file="+escapeProperty(a.pos.File))
		if a.pos.Line > 0 {
			props = append(props, "line="+strconv.Itoa(a.pos.Line))
		}
	}
	props = append(props, "title="+escapeProperty(a.title))
	return fmt.Sprintf("::%s %s::%s", a.level, strings.Join(props, ","), escapeData(a.message))
}

// escapeData and escapeProperty are the runner's escapes: a message may
// hold newlines; a property may hold neither ':' nor ','.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// annotations are the problems and changes as workflow commands: an error
// for a kind --fail-on names, a warning for any other problem, a notice for
// any other change.
func annotations(problems []render.Problem, set change.Set, fail *failOn, loc locator) []annotation {
	var out []annotation
	for _, p := range problems {
		a := annotation{level: "warning", title: "mcs-gitops: " + string(p.Kind), message: p.String()}
		if fail.problems[p.Kind] {
			a.level = "error"
		}
		switch p.Kind {
		case render.ProblemInvalid, render.ProblemConflict, render.ProblemNotReady:
			a.pos, _ = loc.at(p.Member, "ServiceExport", p.Namespace, p.Name)
		case render.ProblemPolicy:
			a.pos, _ = loc.at(p.Member, "GlobalTrafficPolicy", p.Namespace, p.Name)
		case render.ProblemWarning:
			if p.Name == "" {
				a.pos, a.message = warningPosition(p.Message)
			}
		}
		out = append(out, a)
	}
	for _, f := range set.Findings() {
		a := annotation{level: "notice", title: "mcs-gitops: " + string(f.Kind), message: f.String()}
		if fail.changes[f.Kind] {
			a.level = "error"
		}
		ns, name, _ := strings.Cut(f.Service, "/")
		switch f.Kind {
		case change.NewConflict:
			a.pos, _ = loc.at(f.Member, "ServiceExport", ns, name)
		case change.PolicyChange:
			a.pos, _ = loc.at(f.Member, "GlobalTrafficPolicy", ns, name)
		}
		out = append(out, a)
	}
	return out
}

// warningPosition splits a snapshot file's warning, "file:line: message",
// into where and what. The file may carry a revision with its own colon
// ("origin/main:inputs/a.yaml:12: …"), so the position is the first
// ":<digits>: " in the warning.
func warningPosition(w string) (snapshot.Position, string) {
	m := warningAt.FindStringSubmatch(w)
	if m == nil {
		return snapshot.Position{}, w
	}
	line, err := strconv.Atoi(m[2])
	if err != nil {
		return snapshot.Position{}, w
	}
	return snapshot.Position{File: checkoutPath(m[1]), Line: line}, m[3]
}

var warningAt = regexp.MustCompile(`^(.+?):(\d+): (.*)$`)

func writeAnnotations(w io.Writer, as []annotation) {
	for _, a := range as {
		fmt.Fprintln(w, a)
	}
}
