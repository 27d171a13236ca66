// SPDX-License-Identifier: Apache-2.0

package render

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Staged is what a render needs of the staged rollouts in progress: a
// member a rollout has not reached yet keeps importing the service as
// it was before the change (Before), while the members reached and
// the exporters' own side (gateway routes and listeners) follow the
// snapshots. Which members are reached, and when, is the loop's
// business (internal/rollout); render only draws the line it is given.
type Staged struct {
	// Before is the world before the changes being rolled out: the
	// snapshots with each rolling service's exports as they were.
	Before []*snapshot.Snapshot
	// BeforeHeld are imports the world before did not have although
	// Before would give them (a namespace that appeared since, say).
	BeforeHeld map[ImportKey]bool
	// Behind are the imports a rollout has not reached yet.
	Behind map[ImportKey]bool
	// Notes, by "namespace/name", end the Ready message of the service's
	// exports: where its rollout stands.
	Notes map[string]string
}

// staging is Staged prepared: the world before, ready to render the
// rolling services from.
type staging struct {
	before   *Prepared
	beforeAt map[string]int
	behind   map[ImportKey]bool
	notes    map[string]string
}

// stagedInput is a service's part of the staging, for Inputs.
type stagedInput struct {
	behind []int
	before *Inputs
	note   string
}

func prepareStaged(cfg *v1alpha1.ClusterSet, opts Options) (*staging, error) {
	st := opts.Staged
	if st == nil || len(st.Behind) == 0 && len(st.Notes) == 0 {
		return nil, nil
	}
	before, err := Prepare(cfg, st.Before, Options{Committed: opts.Committed, Held: st.BeforeHeld})
	if err != nil {
		return nil, fmt.Errorf("the world before the rollouts in progress: %w", err)
	}
	s := &staging{before: before, beforeAt: make(map[string]int, before.Len()), behind: st.Behind, notes: st.Notes}
	for i, k := range before.keys {
		s.beforeAt[k.ns+"/"+k.name] = i
	}
	return s, nil
}

// behindOf are the indexes of the members service i has not reached.
func (s *staging) behindOf(p *Prepared, i int) []int {
	if len(s.behind) == 0 {
		return nil
	}
	var out []int
	key := p.keys[i]
	for j, m := range p.members {
		if s.behind[ImportKey{Member: m.name, Namespace: key.ns, Name: key.name}] {
			out = append(out, j)
		}
	}
	return out
}

func (s *staging) input(p *Prepared, i int) *stagedInput {
	key := p.keys[i]
	id := key.ns + "/" + key.name
	in := &stagedInput{behind: s.behindOf(p, i), note: s.notes[id]}
	if len(in.behind) == 0 && in.note == "" {
		return nil
	}
	if j, ok := s.beforeAt[id]; ok && len(in.behind) > 0 {
		b := s.before.Inputs(j)
		in.before = &b
	}
	return in
}

// stagger gives the members service i has not reached their part of
// its output in the world before: their objects past the export side,
// and their entries in every per-member list of the report, rep. A
// service the world before did not export gives them nothing. It
// returns the report, and the note for the exports' Ready message.
func (s *staging) stagger(p *Prepared, i int, out *ServiceOutput, rep ServiceReport) (ServiceReport, string) {
	key := p.keys[i]
	id := key.ns + "/" + key.name
	behind := s.behindOf(p, i)
	if len(behind) > 0 {
		before := &ServiceOutput{Objects: make([][]Object, len(p.members))}
		if j, ok := s.beforeAt[id]; ok {
			before = s.before.Service(j)
		}
		late := map[string]bool{}
		for _, m := range behind {
			late[p.members[m].name] = true
			out.Objects[m] = append(slices.Clone(out.Objects[m][:exportSide(out, m)]), before.Objects[m][exportSide(before, m):]...)
		}
		rep = staggerReport(rep, before.Report, late, p.Members())
	}
	return rep, s.notes[id]
}

func exportSide(o *ServiceOutput, m int) int {
	if o.exportSide == nil {
		return 0
	}
	return o.exportSide[m]
}

// staggerReport is after with each late member's entries taken from
// before, and the late members listed in Behind.
func staggerReport(after, before ServiceReport, late map[string]bool, order []string) ServiceReport {
	rank := make(map[string]int, len(order))
	for i, m := range order {
		rank[m] = i
	}
	names := func(a, b []string) []string {
		return pick(a, b, late, rank, func(m string) string { return m })
	}
	after.ImportedBy = names(after.ImportedBy, before.ImportedBy)
	after.HeldImports = names(after.HeldImports, before.HeldImports)
	after.MissingNamespace = names(after.MissingNamespace, before.MissingNamespace)
	after.CreatedNamespace = names(after.CreatedNamespace, before.CreatedNamespace)
	after.OutOfReach = pick(after.OutOfReach, before.OutOfReach, late, rank, func(o OutOfReach) string { return o.Member })
	after.NotServed = pick(after.NotServed, before.NotServed, late, rank, func(n NotServed) string { return n.Member })
	after.Policies = pick(after.Policies, before.Policies, late, rank, func(p PolicyReport) string { return p.Member })
	after.Behind = nil
	for _, m := range order {
		if late[m] {
			after.Behind = append(after.Behind, m)
		}
	}
	return after
}

// pick keeps a's entries of members not late and b's of those late, in
// member order.
func pick[T any](a, b []T, late map[string]bool, rank map[string]int, member func(T) string) []T {
	var out []T
	for _, x := range a {
		if !late[member(x)] {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if late[member(x)] {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(x, y T) int { return cmp.Compare(rank[member(x)], rank[member(y)]) })
	return out
}

// withNote ends the Ready condition's message with note.
func withNote(conds []Condition, note string) []Condition {
	conds = slices.Clone(conds)
	for i, c := range conds {
		if c.Type == "Ready" {
			conds[i].Message += "; " + note
		}
	}
	return conds
}
