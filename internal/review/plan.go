// SPDX-License-Identifier: Apache-2.0

package review

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Input is what Split needs: the live world and the approved one, read from
// the branch's last commit.
type Input struct {
	// Live are this cycle's snapshots, one per member.
	Live []*snapshot.Snapshot
	// Approved are the branch's inputs/ snapshots by member; a member
	// without one has never been approved (KindMember).
	Approved map[string]*snapshot.Snapshot
	// ApprovedImports are the imports the branch's report lists.
	ApprovedImports map[render.ImportKey]bool
	// Review are the kinds that need approval; a change of no such kind
	// goes straight to the branch.
	Review []Kind
	// Rejected are proposals closed unmerged, name to digest: one with
	// the same digest is not proposed again.
	Rejected map[string]string
	// Declined are imports a person took out of a merged proposal, with
	// the digest of the service's exports then (ServiceDigest): while the
	// digest is the same they stay held and are not proposed again.
	Declined map[render.ImportKey]string
	// Render renders a world (the caller binds config and allocations).
	Render func(World) (*render.Output, error)
}

// Plan is one cycle's split.
type Plan struct {
	// Branch is the world the branch gets, and its render.
	Branch       World
	BranchOutput *render.Output
	// Proposals are the held changes, sorted by name; a rejected one has
	// no world or output.
	Proposals []*Proposal
	// Declined are the declined imports that still stand, with their
	// digests; held in every world, proposed in none.
	Declined map[render.ImportKey]string
}

// Proposal is one held change: what it is, and the world it would make.
type Proposal struct {
	// Name is stable while the change is about the same thing:
	// service/<ns>/<name>, import/<member>/<ns>, policy/<member>/<ns>/<name>
	// or member/<member>. The proposal branch is named after it.
	Name  string
	Kinds []Kind
	// Digest changes whenever the change itself does; a proposal is
	// updated in place when it does.
	Digest string
	// Summary says in a line each what the change does.
	Summary []string
	// Exports are the held exports, for their pending status.
	Exports []ExportRef
	// Rejected is set when a proposal of this name and digest was closed
	// unmerged: it is held but not proposed again.
	Rejected bool
	World    World
	Output   *render.Output
}

// ExportRef names one member's export of one service.
type ExportRef struct {
	Member, Namespace, Name string
	// New is set when the branch does not export it at all yet.
	New bool
}

// Split splits the difference between the approved and the live world.
// With no structural difference the branch's world is the live one and
// the render is the only one done: churn costs what it costs without
// review.
func Split(in Input) (*Plan, error) {
	declined := map[render.ImportKey]string{}
	for k, d := range in.Declined {
		if ServiceDigest(in.Live, k.Namespace, k.Name) == d {
			declined[k] = d
		}
	}
	always := map[render.ImportKey]bool{}
	for k := range declined {
		always[k] = true
	}
	full, err := in.Render(World{Snapshots: in.Live, Held: always})
	if err != nil {
		return nil, err
	}
	units := findUnits(in.Live, in.Approved, in.ApprovedImports, &full.Report)
	if len(units) == 0 {
		return &Plan{Branch: World{Snapshots: in.Live, Held: always}, BranchOutput: full, Declined: declined}, nil
	}
	groups := group(units, in.Approved)
	applied := map[string]bool{}
	branch, err := build(in.Live, in.Approved, units, applied, always)
	if err != nil {
		return nil, err
	}
	branchOut, err := in.Render(branch)
	if err != nil {
		return nil, err
	}
	// A group whose effect needs no approval joins the branch at once;
	// the rest are measured against the branch as it then stands. Groups
	// are independent by construction (a service's exports and imports
	// are one group), so the order is only for determinism.
	var held []*Proposal
	for _, g := range groups {
		p, w, out, err := try(in, units, applied, always, g, &branchOut.Report)
		if err != nil {
			return nil, err
		}
		if !needsReview(p.Kinds, in.Review) {
			for _, u := range g.units {
				applied[u.String()] = true
			}
			branch, branchOut = w, out
			continue
		}
		held = append(held, p)
	}
	for _, p := range held {
		if d, ok := in.Rejected[p.Name]; ok && d == p.Digest {
			p.Rejected = true
			continue
		}
		g := groupNamed(groups, p.Name)
		_, w, out, err := try(in, units, applied, always, g, &branchOut.Report)
		if err != nil {
			return nil, err
		}
		p.World, p.Output = w, out
	}
	return &Plan{Branch: branch, BranchOutput: branchOut, Proposals: held, Declined: declined}, nil
}

// try renders the branch's world with g applied and describes g by what
// that render changes.
func try(in Input, units []unit, applied map[string]bool, always map[render.ImportKey]bool, g *unitGroup, base *render.Report) (*Proposal, World, *render.Output, error) {
	with := maps.Clone(applied)
	for _, u := range g.units {
		with[u.String()] = true
	}
	w, err := build(in.Live, in.Approved, units, with, always)
	if err != nil {
		return nil, World{}, nil, err
	}
	out, err := in.Render(w)
	if err != nil {
		return nil, World{}, nil, fmt.Errorf("proposal %s: %w", g.name, err)
	}
	p := describe(g, base, &out.Report)
	return p, w, out, nil
}

func needsReview(kinds, review []Kind) bool {
	for _, k := range kinds {
		if slices.Contains(review, k) {
			return true
		}
	}
	return false
}

// unitGroup is the units of one independent change.
type unitGroup struct {
	name   string
	member bool
	units  []unit
}

// group puts units together by what changed: everything about a new
// member; else everything about one service (its exports and the imports
// they bring, which join a new member's group when only that member's
// exports bring them); a member's imports of a namespace's services whose
// exports did not change (the member created the namespace); each policy.
func group(units []unit, approved map[string]*snapshot.Snapshot) []*unitGroup {
	isNew := func(m string) bool { _, known := approved[m]; return !known }
	// exportGroup is, per service with changed exports, the group its
	// imports join.
	exportGroup := map[string]string{}
	for _, u := range units {
		if u.kind != unitExport {
			continue
		}
		if !isNew(u.member) {
			exportGroup[u.service()] = "service/" + u.service()
		} else if _, ok := exportGroup[u.service()]; !ok {
			exportGroup[u.service()] = "member/" + u.member
		}
	}
	byName := map[string]*unitGroup{}
	for _, u := range units {
		var name string
		switch {
		case isNew(u.member):
			name = "member/" + u.member
		case u.kind == unitExport:
			name = "service/" + u.service()
		case u.kind == unitImport && exportGroup[u.service()] != "":
			name = exportGroup[u.service()]
		case u.kind == unitImport:
			name = "import/" + u.member + "/" + u.ns
		default:
			name = "policy/" + u.member + "/" + u.service()
		}
		g := byName[name]
		if g == nil {
			g = &unitGroup{name: name, member: strings.HasPrefix(name, "member/")}
			byName[name] = g
		}
		g.units = append(g.units, u)
	}
	out := slices.Collect(maps.Values(byName))
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func groupNamed(gs []*unitGroup, name string) *unitGroup {
	for _, g := range gs {
		if g.name == name {
			return g
		}
	}
	return nil
}

// describe names the kinds of change g makes and says what they are,
// from its units and from what the render with it changes against base:
// conflicts, policy routing and gateway allocations are effects, not
// inputs.
func describe(g *unitGroup, base, with *render.Report) *Proposal {
	p := &Proposal{Name: g.name}
	kinds := map[Kind]bool{}
	if g.member {
		kinds[KindMember] = true
	}
	h := sha256.New()
	for _, u := range g.units {
		fmt.Fprintln(h, u.String())
		switch {
		case u.kind == unitExport && u.live == "":
			kinds[KindWithdrawal] = true
			p.Summary = append(p.Summary, fmt.Sprintf("%s stops exporting %s", u.member, u.service()))
			p.Exports = append(p.Exports, ExportRef{Member: u.member, Namespace: u.ns, Name: u.name})
		case u.kind == unitExport:
			kinds[KindExport] = true
			verb := "exports"
			if u.approved != "" {
				verb = "changes what it exports of"
			}
			p.Summary = append(p.Summary, fmt.Sprintf("%s %s %s", u.member, verb, u.service()))
			p.Exports = append(p.Exports, ExportRef{Member: u.member, Namespace: u.ns, Name: u.name, New: u.approved == ""})
		case u.kind == unitImport:
			kinds[KindImport] = true
			p.Summary = append(p.Summary, fmt.Sprintf("%s imports %s", u.member, u.service()))
		case u.kind == unitPolicy:
			kinds[KindPolicy] = true
			what := "changes"
			switch {
			case u.approved == "":
				what = "creates"
			case u.live == "":
				what = "deletes"
			}
			p.Summary = append(p.Summary, fmt.Sprintf("%s %s GlobalTrafficPolicy %s", u.member, what, u.service()))
		}
	}
	p.Digest = hex.EncodeToString(h.Sum(nil)[:8])
	for _, line := range effects(base, with) {
		kinds[line.kind] = true
		p.Summary = append(p.Summary, line.text)
	}
	p.Kinds = sortKinds(slices.Collect(maps.Keys(kinds)))
	return p
}

type effect struct {
	kind Kind
	text string
}

// effects compares two reports for what a change does beyond its units:
// conflicts, the clusters a policy routes to, gateway allocations.
func effects(base, with *render.Report) []effect {
	var out []effect
	b := servicesByKey(base)
	for _, s := range with.Services {
		key := s.Namespace + "/" + s.Name
		old := b[key]
		if c, o := conflicts(s), conflicts(old); c != o {
			if c == "" {
				out = append(out, effect{KindConflict, fmt.Sprintf("the conflict on %s is resolved", key)})
			} else {
				out = append(out, effect{KindConflict, fmt.Sprintf("conflict on %s: %s", key, c)})
			}
		}
		if r, o := routing(s), routing(old); r != o && o != "" {
			out = append(out, effect{KindPolicy, fmt.Sprintf("traffic to %s is routed %s (was %s)", key, r, o)})
		}
	}
	if g, o := allocations(with), allocations(base); g != o {
		out = append(out, effect{KindGateway, "gateway TCP port allocations change: " + g})
	}
	return out
}

func servicesByKey(r *render.Report) map[string]render.ServiceReport {
	out := map[string]render.ServiceReport{}
	for _, s := range r.Services {
		out[s.Namespace+"/"+s.Name] = s
	}
	return out
}

// conflicts says which exports of a service are in conflict and why.
func conflicts(s render.ServiceReport) string {
	var parts []string
	for _, e := range s.Exports {
		if c, ok := e.Condition("Conflict"); ok && c.Status == "True" {
			parts = append(parts, fmt.Sprintf("%s (%s: %s)", e.Member, c.Reason, c.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// routing says, per consuming member with a policy, whom it routes to.
func routing(s render.ServiceReport) string {
	var parts []string
	for _, p := range s.Policies {
		parts = append(parts, fmt.Sprintf("%s: %s %s", p.Member, p.LbType, strings.Join(p.Clusters, ",")))
	}
	return strings.Join(parts, "; ")
}

func allocations(r *render.Report) string {
	var parts []string
	for _, g := range r.Gateways {
		for _, a := range g.Allocations {
			parts = append(parts, fmt.Sprintf("%s:%d=%s/%s:%d", g.Member, a.Port, a.Namespace, a.Service, a.ServicePort))
		}
	}
	return strings.Join(parts, " ")
}
