// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// failOn is --fail-on: problem kinds of the world after a change, and kinds
// of change, in one list. "policy" is both: a traffic policy not applied,
// and one that changes where traffic goes.
type failOn struct {
	raw      string
	problems map[render.ProblemKind]bool
	changes  map[change.Kind]bool
}

const failOnUsage = "exit 1 when something of these kinds is found, a comma list in any case: problems (invalid, conflict, notready, missingnamespace, warning, policy) and changes (withdrawal, new-reachability, new-conflict, policy, member)"

func (f *failOn) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.raw, "fail-on", "", failOnUsage+" (default: none)")
}

// parse reads the flag; an unknown kind is bad input naming the valid ones.
func (f *failOn) parse() error {
	f.problems, f.changes = map[render.ProblemKind]bool{}, map[change.Kind]bool{}
	for _, name := range strings.Split(f.raw, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		known := false
		if i := slices.IndexFunc(render.ProblemKinds, func(k render.ProblemKind) bool { return strings.EqualFold(string(k), name) }); i >= 0 {
			f.problems[render.ProblemKinds[i]], known = true, true
		}
		if i := slices.IndexFunc(change.Kinds, func(k change.Kind) bool { return strings.EqualFold(string(k), name) }); i >= 0 {
			f.changes[change.Kinds[i]], known = true, true
		}
		if !known {
			var problems, changes []string
			for _, k := range render.ProblemKinds {
				problems = append(problems, strings.ToLower(string(k)))
			}
			for _, k := range change.Kinds {
				changes = append(changes, string(k))
			}
			return &exitError{2, fmt.Errorf("--fail-on: unknown kind %q; valid kinds: problems %s; changes %s",
				name, strings.Join(problems, ", "), strings.Join(changes, ", "))}
		}
	}
	return nil
}

// set reports whether --fail-on was given.
func (f *failOn) set() bool { return len(f.problems)+len(f.changes) > 0 }

// wantsChanges reports whether a change kind was asked for.
func (f *failOn) wantsChanges() bool { return len(f.changes) > 0 }

// check returns exit 1 listing every problem and change of a kind asked
// for, problems first; nil when there is none.
func (f *failOn) check(problems []render.Problem, set change.Set) error {
	var failed []string
	for _, p := range problems {
		if f.problems[p.Kind] {
			failed = append(failed, fmt.Sprintf("%s: %s", p.Kind, p))
		}
	}
	for _, c := range set.Findings() {
		if f.changes[c.Kind] {
			failed = append(failed, fmt.Sprintf("%s: %s", c.Kind, c))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &exitError{1, fmt.Errorf("%d finding(s) of a kind in --fail-on:\n  %s", len(failed), strings.Join(failed, "\n  "))}
}
