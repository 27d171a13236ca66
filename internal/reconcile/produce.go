// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// tree is one rendered repository state, ready to commit.
type tree struct {
	files map[string][]byte
	// changed are the paths at which files may differ from since, the
	// files of the render before (Loop.treeChanges); nil: anywhere.
	since   map[string][]byte
	changed []string
	// gens are the members' generations (Loop.generations): a member's
	// moves on whenever what it is applied may have changed. Nil outside
	// the loop's own render.
	gens map[string]uint64
	// joined are each member's snapshot as the files under
	// inputs/<member>/ join, by member (layout.JoinInputs); parts those
	// files.
	joined map[string][]byte
	parts  map[string]map[string][]byte
	report *render.Report
	prev   *render.Report
	events []change.Member
	digest string
	// review is set in review mode.
	review *reviewed
	// rollouts are the staged rollouts the tree records.
	rollouts *staged
}

// stage records st in t: status/rollouts.yaml, none when no rollout is
// in progress.
func (t *tree) stage(st *staged) error {
	t.rollouts = st
	b, err := rollout.Format(st.state)
	if err != nil {
		return fmt.Errorf("render: %s: %w", layout.RolloutsFile, err)
	}
	if b != nil {
		t.files[layout.RolloutsFile] = b
	}
	return nil
}

// members are the members whose snapshots the tree holds, sorted.
func (t *tree) members() []string { return slices.Sorted(maps.Keys(t.joined)) }

// readCommitted loads what commit head says about the world. An empty
// repository says nothing. The last commit read is kept: a commit never
// changes, and most cycles render on top of the same one.
func (l *Loop) readCommitted(head plumbing.Hash) (*layout.Committed, error) {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	if l.committed != nil && l.committedAt == head {
		return l.committed, nil
	}
	c, err := l.loadCommitted(head)
	if err != nil {
		return nil, err
	}
	l.committed, l.committedAt = c, head
	return c, nil
}

// advanceCommitted makes commit, which this loop just made of files on
// top of parent, the committed state the next cycle renders on, without
// reading it back from Git: only the reports whose files c says changed
// are parsed (layout.ReadCommittedAfter gives what ReadCommitted of the
// commit gives); joined are the members' snapshots, by member, as the
// commit's inputs/ join. Anything else (no state for parent, a report that does
// not parse) leaves the next cycle to read the commit as before.
func (l *Loop) advanceCommitted(parent, commit plumbing.Hash, files, joined map[string][]byte, c *gitsync.Changes) {
	if c == nil {
		return
	}
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	if l.committed == nil || l.committedAt != parent {
		return
	}
	changed := make(map[string]bool, len(c.Written)+len(c.Removed))
	for _, p := range c.Written {
		changed[p] = true
	}
	for _, p := range c.Removed {
		changed[p] = true
	}
	next, err := layout.ReadCommittedAfter(l.committed, files, changed, joined)
	if err != nil {
		return
	}
	l.committed, l.committedAt = next, commit
}

func (l *Loop) loadCommitted(head plumbing.Hash) (*layout.Committed, error) {
	if head.IsZero() {
		return layout.ReadCommitted(nil)
	}
	files, err := l.Repo.Files(head, layout.CommittedRoots...)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", head.String()[:12], err)
	}
	c, err := layout.ReadCommitted(files)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", head.String()[:12], err)
	}
	return c, nil
}

// resolved is what a render is made from: the commit it goes on top of,
// what that commit says, and every member's snapshot (live or standing
// in), with their normalized bytes.
type resolved struct {
	head   plumbing.Hash
	prev   *layout.Committed
	res    *snapshot.Resolution
	health []byte
	// reviewGen is the review state's generation the render was made at;
	// rolloutGen the rollouts' (Loop.rolloutGen).
	reviewGen, rolloutGen int
}

// resolve decides each member's snapshot for a render on top of commit
// head: snapshot.Resolve what stands in for a member that could not be
// read, snapshot.HoldWithdrawals which members the withdrawal guard holds.
func (l *Loop) resolve(head plumbing.Hash, results []clusters.Result) (*resolved, error) {
	prev, err := l.readCommitted(head)
	if err != nil {
		return nil, err
	}
	if err := l.checkStandIns(results, prev); err != nil {
		return nil, err
	}
	t := l.Config.Spec.Sync.Timings()
	last := snapshot.LastCommit{Inputs: prev.Inputs, Health: prev.Health, InputFile: layout.InputFile}
	res, err := snapshot.Resolve(clusters.Reads(results), last, l.now(), t.StaleAfter, l.normalized())
	if err != nil {
		return nil, err
	}
	if err := snapshot.HoldWithdrawals(res, last, exportsOf(prev.Report), guardOf(l.Config)); err != nil {
		return nil, err
	}
	held := 0
	for _, h := range res.Health {
		if h.Held != nil {
			held++
			l.log().Warn("withdrawal held for a person", "member", h.Member, "withdrawn", h.Held.Withdrawn, "of", h.Held.Exported, "digest", h.Held.Digest)
		}
	}
	if l.Metrics != nil {
		l.Metrics.WithdrawalsHeld.Set(float64(held))
	}
	for _, r := range results {
		if kept, ok := res.KeptGateway[r.Member]; ok {
			l.log().Warn("gateway host did not resolve; keeping the last committed addresses",
				"member", r.Member, "error", r.GatewayErr.Error(), "kept", strings.Join(kept, ","))
		}
	}
	health, err := layout.FormatHealth(res.Health)
	if err != nil {
		return nil, err
	}
	return &resolved{head: head, prev: prev, res: res, health: health, reviewGen: l.Review.Generation(), rolloutGen: l.rolloutGeneration()}, nil
}

// produce renders the tree for the collected results on top of commit
// head.
func (l *Loop) produce(head plumbing.Hash, results []clusters.Result) (*tree, error) {
	rs, err := l.resolve(head, results)
	if err != nil {
		return nil, err
	}
	return l.render(rs)
}

// render renders the tree for what rs resolved.
func (l *Loop) render(rs *resolved) (*tree, error) {
	if l.Review != nil {
		return l.renderReview(rs)
	}
	snaps := completeSnapshots(l.Config.MemberNames(), rs.res.Snapshots)
	l.rendererMu.Lock()
	defer l.rendererMu.Unlock()
	if l.renderer == nil {
		l.renderer = &layout.Renderer{}
	}
	st, err := l.rollouts(rs, snaps)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	opts := render.Options{Committed: rs.prev.Report.Allocations(), Staged: rollout.Staging(st.state, snaps)}
	rendered, report, err := l.renderer.Render(l.Config, snaps, opts)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	if started, err := l.startRollouts(st, rs, snaps, report); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	} else if started {
		opts.Staged = rollout.Staging(st.state, snaps)
		if rendered, report, err = l.renderer.Render(l.Config, snaps, opts); err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
	}
	t, err := l.treeOf(rs, snaps, rendered, report, nil)
	if err != nil {
		return nil, err
	}
	if err := t.stage(st); err != nil {
		return nil, err
	}
	moved := l.movedSnapshots(t.joined)
	t.since, t.changed = l.lastTree, l.treeChanges(t, moved)
	t.gens = l.generations(l.renderer.Touched(), moved)
	l.lastTree, l.lastJoined, l.lastParts = t.files, t.joined, t.parts
	return t, nil
}

// movedSnapshots are the members whose snapshot in joined is not the one
// of the last render (the normalize cache hands out the same bytes for
// the same snapshot). Called with rendererMu held.
func (l *Loop) movedSnapshots(joined map[string][]byte) map[string]bool {
	moved := map[string]bool{}
	for _, m := range l.Config.MemberNames() {
		b, last := joined[m], l.lastJoined[m]
		if len(b) != len(last) || (len(b) > 0 && &b[0] != &last[0]) {
			moved[m] = true
		}
	}
	return moved
}

// treeChanges are the paths at which t's files may differ from the last
// render's tree (gitsync.Repo.ExpectChanges): what the Renderer changed,
// every input file of a member whose snapshot moved, before and now, and
// the loop's own files. Nil when the Renderer rendered everything anew,
// or there was no last tree. Called with rendererMu held.
func (l *Loop) treeChanges(t *tree, moved map[string]bool) []string {
	rendered := l.renderer.Changed()
	if rendered == nil || l.lastTree == nil {
		return nil
	}
	out := append(slices.Clone(rendered), layout.ConfigFile, layout.HealthFile, layout.ReviewFile, layout.RolloutsFile, layout.InventoryFile)
	for m := range moved {
		out = slices.AppendSeq(out, maps.Keys(l.lastParts[m]))
		out = slices.AppendSeq(out, maps.Keys(t.parts[m]))
	}
	return out
}

// generations moves on the generation of every member the render's
// changes reached (layout.Renderer.Touched) or whose own snapshot moved
// (its exports' status is written from it), and returns them all. Called
// with rendererMu held.
func (l *Loop) generations(touched, moved map[string]bool) map[string]uint64 {
	if l.gens == nil {
		l.gens = map[string]uint64{}
	}
	names := l.Config.MemberNames()
	out := make(map[string]uint64, len(names))
	for _, m := range names {
		if touched[m] || moved[m] {
			l.gens[m]++
		}
		out[m] = l.gens[m]
	}
	return out
}

// treeOfOutput is treeOf for a render.Output.
func (l *Loop) treeOfOutput(rs *resolved, snaps []*snapshot.Snapshot, out *render.Output, st *layout.ReviewState) (*tree, error) {
	rendered, err := layout.Files(out)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	return l.treeOf(rs, snaps, rendered, &out.Report, st)
}

// treeOf lays one render out as the repository's tree: the config, the
// snapshot of each member it was rendered from, the rendered files, the
// members' health and, in review mode, status/review.yaml. A snapshot
// review mode changed (a structural change held back) is committed as
// changed, so the commit renders to itself (render --check).
//
// rendered becomes the tree's map: the rest is added to it.
func (l *Loop) treeOf(rs *resolved, snaps []*snapshot.Snapshot, rendered map[string][]byte, report *render.Report, st *layout.ReviewState) (*tree, error) {
	prev, res := rs.prev, rs.res
	files := rendered
	files[layout.ConfigFile] = l.ConfigBytes
	inputs, joined, partsOf := map[string][]byte{}, map[string][]byte{}, map[string]map[string][]byte{}
	live := make(map[string]*snapshot.Snapshot, len(res.Snapshots))
	for _, s := range res.Snapshots {
		live[s.Member] = s
	}
	for _, s := range snaps {
		b, ok := res.Files[s.Member]
		if !ok {
			continue // never read and nothing committed
		}
		if live[s.Member] != s {
			var err error
			if b, err = snapshot.Format(s); err != nil {
				return nil, fmt.Errorf("render: %w", err)
			}
		}
		parts, b, err := l.inputParts(s, b)
		if err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
		maps.Copy(files, parts)
		inputs[layout.InputFile(s.Member)] = b
		joined[s.Member], partsOf[s.Member] = b, parts
	}
	files[layout.HealthFile] = rs.health
	if l.Inventory != nil {
		files[layout.InventoryFile] = l.Inventory
	}
	if st != nil {
		b, err := layout.FormatReviewState(st)
		if err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
		files[layout.ReviewFile] = b
	}
	return &tree{
		files: files, report: report, prev: prev.Report, joined: joined, parts: partsOf,
		events: healthEvents(prev.Health, res.Health), digest: layout.SnapshotDigest(inputs),
	}, nil
}

// completeSnapshots gives every member a snapshot: one that was never read
// and has nothing committed counts as empty (no namespaces, no exports),
// which the report shows, rather than failing the whole render.
func completeSnapshots(names []string, snaps []*snapshot.Snapshot) []*snapshot.Snapshot {
	have := map[string]bool{}
	for _, s := range snaps {
		have[s.Member] = true
	}
	for _, n := range names {
		if !have[n] {
			snaps = append(snaps, &snapshot.Snapshot{Member: n})
		}
	}
	return snaps
}

// healthEvents says in one line each what changed about reachability, for
// the commit message: the change model's member events between the last
// commit's health and this cycle's, members joining (a member added to
// clusterset.yaml, a ClusterProfile listed) and leaving included.
func healthEvents(prev map[string]snapshot.Health, next []snapshot.Health) []change.Member {
	cur := make(map[string]snapshot.Health, len(next))
	names := make([]string, 0, len(next))
	for _, h := range next {
		cur[h.Member] = h
		names = append(names, h.Member)
	}
	// A member the last commit has no health record of joins, one it
	// has and this one has not leaves; on the first commit every member
	// is simply there.
	prevNames := names
	if len(prev) > 0 {
		prevNames = slices.Sorted(maps.Keys(prev))
	}
	return change.HealthBetween(prevNames, prev, names, cur)
}

// exportsOf lists, per member, the exports (namespace/name) a report
// rendered: what the withdrawal guard compares a read with.
func exportsOf(r *render.Report) map[string][]string {
	out := map[string][]string{}
	for _, s := range r.Services {
		for _, e := range s.Exports {
			out[e.Member] = append(out[e.Member], s.Namespace+"/"+s.Name)
		}
	}
	return out
}

// guardOf is spec.sync.withdrawalGuard as snapshot.HoldWithdrawals takes it.
func guardOf(cfg *v1alpha1.ClusterSet) snapshot.Guard {
	g := cfg.Spec.Sync.Guard()
	out := snapshot.Guard{MinExports: int(g.MinExports), MaxSharePercent: int(g.MaxSharePercent),
		MaxClusterSetSharePercent: int(g.MaxClusterSetSharePercent), Released: map[string]string{}}
	for _, r := range g.Release {
		out.Released[r.Member] = r.Digest
	}
	return out
}

// inputParts is the package's inputParts, the last answer per member kept
// for the same bytes: the snapshot of a member that did not change is
// the same slice cycle after cycle (snapshot.NormalizeCache).
func (l *Loop) inputParts(s *snapshot.Snapshot, b []byte) (map[string][]byte, []byte, error) {
	l.cacheMu.Lock()
	last, ok := l.parts[s.Member]
	l.cacheMu.Unlock()
	if ok && len(b) > 0 && len(last.data) == len(b) && &last.data[0] == &b[0] {
		return last.parts, last.joined, nil
	}
	parts, joined, err := inputParts(s, b)
	if err != nil {
		return nil, nil, err
	}
	l.cacheMu.Lock()
	if l.parts == nil {
		l.parts = map[string]memberParts{}
	}
	l.parts[s.Member] = memberParts{data: b, parts: parts, joined: joined}
	l.cacheMu.Unlock()
	return parts, joined, nil
}

// memberParts is one member's snapshot bytes laid out as files.
type memberParts struct {
	data, joined []byte
	parts        map[string][]byte
}

// inputParts lays out member s's snapshot, formatted as b, as the files of
// inputs/<member>/, and returns them with the bytes they join to (what
// the Snapshot-Digest hashes). A snapshot committed before snapshots were
// split (a stand-in from an older commit) is one stream without part
// markers: formatted again, it is laid out like the others.
func inputParts(s *snapshot.Snapshot, b []byte) (map[string][]byte, []byte, error) {
	parts, err := layout.InputFiles(s.Member, b)
	if err == nil {
		return parts, b, nil
	}
	if b, err = snapshot.Format(s); err != nil {
		return nil, nil, err
	}
	if parts, err = layout.InputFiles(s.Member, b); err != nil {
		return nil, nil, err
	}
	return parts, b, nil
}
