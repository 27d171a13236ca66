// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/review"
	"github.com/mcs-gitops/mcs-gitops/internal/review/forge"
	"github.com/mcs-gitops/mcs-gitops/internal/review/propose"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// poll asks the forge about every proposal the branch's last commit lists
// and then fetches the branch: a request merged since the last poll is on
// it now. Asking first and fetching second means a merge the forge
// reported is always in what the next render is made on. It reports
// whether anything changed that the next cycle must render: a request's
// state, or the branch (a merge, a person's push).
func (l *Loop) poll(ctx context.Context) (changed bool, err error) {
	rv := l.Review
	now := l.now()
	gen := rv.Generation()
	head, err := l.Repo.Head()
	if err != nil {
		return false, &RepoError{err}
	}
	c, err := l.readCommitted(head)
	if err != nil {
		return false, &RepoError{err}
	}
	for _, p := range c.Review.Proposals {
		req, err := rv.Forge.Find(ctx, layout.ProposalBranch(p.Name))
		if err != nil {
			return false, fmt.Errorf("review: proposal %s: %w", p.Name, err)
		}
		rv.SetRequest(p.Name, req)
	}
	if err := l.Repo.ResetToRemote(ctx); err != nil {
		return false, &RepoError{fmt.Errorf("review: fetch %s: %w", rv.Base, err)}
	}
	moved, err := l.Repo.Head()
	if err != nil {
		return false, &RepoError{err}
	}
	rv.MarkPolled(now)
	return moved != head || rv.Generation() != gen, nil
}

// reviewed is what a review-mode render adds to a tree: the proposals to
// push after the branch's commit, and the state the commit records.
type reviewed struct {
	proposals []*review.Proposal
	state     *layout.ReviewState
	// prev is what the commit rendered on recorded.
	prev *layout.ReviewState
	// rs is what the render was made from; a proposal's tree is laid out
	// from it only when the proposal is pushed (proposalTree).
	rs *resolved
	// branch is the branch's tree, which each proposal's changes are
	// listed against, and branchReport its render's report, which each
	// proposal's effect is described against.
	branch       map[string][]byte
	branchReport *render.Report
	// staged are, by proposal, the rollouts its tree records: the
	// branch's, and those its own change starts.
	staged map[string]*staged
	// rollouts are the branch's.
	rollouts *rollout.State
}

// renderReview is render in review mode: the branch gets the live world
// with every structural change that needs approval held back, and each
// held change gets its own tree for its proposal branch.
func (l *Loop) renderReview(rs *resolved) (*tree, error) {
	prev := rs.prev
	approved, err := l.Review.Approved(rs.head, prev.Inputs)
	if err != nil {
		return nil, err
	}
	live := completeSnapshots(l.Config.MemberNames(), rs.res.Snapshots)
	actual, declined, err := l.declined(rs, approved)
	if err != nil {
		return nil, err
	}
	alloc := prev.Report.Allocations()
	// Rollouts go on in the approved world: what a merge brought.
	st, err := l.rollouts(rs, completeSnapshots(l.Config.MemberNames(), slices.Collect(maps.Values(approved))))
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	renderStaged := func(w review.World, st *rollout.State) (*render.Output, error) {
		return render.RenderWith(l.Config, w.Snapshots, render.Options{Committed: alloc, Held: w.Held, Staged: rollout.Staging(st, w.Snapshots)})
	}
	// The merge of a rollout's proposal approved every wave: the imports
	// a wave brings are not proposed again.
	for _, r := range st.state.Rollouts {
		if r.Aborted {
			continue
		}
		ns, name, _ := strings.Cut(r.Service, "/")
		for _, w := range r.Waves[:r.Reached] {
			for _, m := range w.Members {
				actual[render.ImportKey{Member: m, Namespace: ns, Name: name}] = true
			}
		}
	}
	plan, err := review.Split(review.Input{
		Live: live, Approved: approved, ApprovedImports: actual, Declined: declined,
		Review: l.Review.NeedApproval(), Rejected: l.Review.Rejected(prev.Review),
		Render: func(w review.World) (*render.Output, error) { return renderStaged(w, st.state) },
	})
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	// A change that needs no approval rolls out from the branch; one
	// that does, from its proposal: merging it approves the whole plan.
	if started, err := l.startRollouts(st, rs, plan.Branch.Snapshots, &plan.BranchOutput.Report); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	} else if started {
		if plan.BranchOutput, err = renderStaged(plan.Branch, st.state); err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
	}
	proposalRollouts := map[string]*staged{}
	for _, p := range plan.Proposals {
		if p.Output == nil {
			continue
		}
		ps := &staged{state: &rollout.State{Rollouts: slices.Clone(st.state.Rollouts)}, ended: st.ended}
		started, err := l.startRollouts(ps, rs, p.World.Snapshots, &p.Output.Report)
		if err != nil {
			return nil, fmt.Errorf("render: proposal %s: %w", p.Name, err)
		}
		if started {
			if p.Output, err = renderStaged(p.World, ps.state); err != nil {
				return nil, fmt.Errorf("render: proposal %s: %w", p.Name, err)
			}
		}
		proposalRollouts[p.Name] = ps
	}
	state := l.Review.State(prev.Review, plan)
	propose.MarkPending(&plan.BranchOutput.Report, plan.Proposals, state)
	t, err := l.treeOfOutput(rs, plan.Branch.Snapshots, plan.BranchOutput, state)
	if err != nil {
		return nil, err
	}
	if err := t.stage(st); err != nil {
		return nil, err
	}
	rv := &reviewed{proposals: plan.Proposals, state: state, prev: prev.Review, rs: rs, branchReport: &plan.BranchOutput.Report, staged: proposalRollouts, rollouts: st.state}
	rv.branch = t.files
	t.review = rv
	return t, nil
}

// declined reads what the branch really imports (the import files of its
// commit, not its report) and the imports declined by hand: those the
// branch already records, and those its report lists but its files do
// not have, which a person removed from a proposal before merging it.
// A declined import is recorded with the service's exports as approved.
func (l *Loop) declined(rs *resolved, approved map[string]*snapshot.Snapshot) (map[render.ImportKey]bool, map[render.ImportKey]string, error) {
	paths, err := l.Repo.Paths(rs.head, layout.Roots)
	if err != nil {
		return nil, nil, fmt.Errorf("review: list the branch's files: %w", err)
	}
	actual := layout.ImportsIn(paths)
	out := map[render.ImportKey]string{}
	for _, o := range rs.prev.Review.Overrides {
		out[render.ImportKey{Member: o.Member, Namespace: o.Namespace, Name: o.Name}] = o.Digest
	}
	snaps := slices.Collect(maps.Values(approved))
	for k := range importsOf(rs.prev.Report) {
		if _, ok := out[k]; !ok && !actual[k] {
			out[k] = review.ServiceDigest(snaps, k.Namespace, k.Name)
			l.log().Info("review: an import was taken out of a merged proposal; holding it", "member", k.Member, "service", k.Namespace+"/"+k.Name)
		}
	}
	return actual, out, nil
}

func importsOf(r *render.Report) map[render.ImportKey]bool {
	out := map[render.ImportKey]bool{}
	for _, s := range r.Services {
		for _, m := range s.ImportedBy {
			out[render.ImportKey{Member: m, Namespace: s.Namespace, Name: s.Name}] = true
		}
	}
	return out
}

// propose brings every proposal branch and request in line with the
// commit the branch is now at: a new or changed proposal is built on top
// of it and pushed, its request opened or updated; a proposal whose change
// went away is closed and its branch deleted. A proposal that did not
// change and whose request is open is left where it is unless it may no
// longer merge cleanly (stale): rebuilding it on every churn commit would
// cost the forge a push per commit.
func (l *Loop) propose(ctx context.Context, base plumbing.Hash, rv *reviewed, recordChanged, due bool) (opened bool, err error) {
	r := l.Review
	prev := rv.prev
	planned := map[string]bool{}
	for _, p := range rv.proposals {
		planned[p.Name] = true
		if p.Rejected {
			continue
		}
		branch := layout.ProposalBranch(p.Name)
		req := r.Request(p.Name)
		if req == nil || req.State != forge.Open {
			r.SetTaken(p.Name, false)
		} else if r.Taken(p.Name) || propose.RecordDigest(prev, p.Name) == p.Digest && !l.stale(branch, base, recordChanged, due) {
			continue
		}
		pt, err := l.proposalTree(rv, p)
		if err != nil {
			return opened, fmt.Errorf("review: proposal %s: %w", p.Name, err)
		}
		msg := propose.Message(p)
		_, changed, err := l.Repo.CommitOn(branch, base, pt.files, layout.Roots, msg)
		if err != nil {
			return opened, fmt.Errorf("review: proposal %s: %w", p.Name, err)
		}
		if changed || req == nil || req.State != forge.Open {
			owned := l.wroteProposal(p.Name)
			if req == nil || req.State != forge.Open {
				// The branch's request is merged or closed (or there is
				// none): whatever the branch holds is done with.
				owned = func(*object.Commit) bool { return true }
			}
			err := l.Repo.PushBranch(ctx, branch, owned)
			if errors.Is(err, gitsync.ErrBranchTaken) {
				// A reviewer's edit is theirs: rebuilding over it would
				// lose it. What the merge carries is read from the branch.
				r.SetTaken(p.Name, true)
				l.log().Warn("review: someone pushed to a proposal's branch; mcs-gitops no longer rebuilds it", "proposal", p.Name, "err", err)
				continue
			}
			if err != nil {
				return opened, fmt.Errorf("review: proposal %s: %w", p.Name, err)
			}
		}
		change := forge.Change{Branch: branch, Base: r.Base, Title: propose.Title(p), Body: l.proposalBody(rv, p, pt.files), Labels: propose.Labels(p)}
		switch {
		case req == nil || req.State != forge.Open:
			// A merged request whose change is still held means the merge
			// did not carry it (it was edited out): not proposed again
			// in the same form.
			if req != nil && req.State == forge.Merged && propose.RecordDigest(prev, p.Name) == p.Digest {
				continue
			}
			if req, err = r.Forge.Open(ctx, change); err != nil {
				return opened, fmt.Errorf("review: open proposal %s: %w", p.Name, err)
			}
			opened = true
			l.log().Info("proposal opened", "proposal", p.Name, "url", req.URL, "kinds", propose.KindNames(p.Kinds))
		case req.Title != change.Title || req.Body != change.Body || !slices.Equal(req.Labels, change.Labels):
			if req, err = r.Forge.Update(ctx, req.Number, change); err != nil {
				return opened, fmt.Errorf("review: update proposal %s: %w", p.Name, err)
			}
			l.log().Info("proposal updated", "proposal", p.Name, "url", req.URL)
		}
		r.SetRequest(p.Name, req)
	}
	for _, old := range prev.Proposals {
		if planned[old.Name] {
			continue
		}
		req := r.Request(old.Name)
		if req != nil && req.State == forge.Open {
			if err := r.Forge.Close(ctx, req.Number, "The change this proposed is no longer there (the exports changed back), so mcs-gitops closed it."); err != nil {
				return opened, fmt.Errorf("review: close proposal %s: %w", old.Name, err)
			}
			l.log().Info("proposal closed", "proposal", old.Name, "url", req.URL, "why", "change gone")
		}
		if err := l.Repo.DeleteBranch(ctx, layout.ProposalBranch(old.Name)); err != nil {
			return opened, fmt.Errorf("review: proposal %s: %w", old.Name, err)
		}
		r.SetRequest(old.Name, nil)
		r.SetTaken(old.Name, false)
	}
	return opened, nil
}

// proposalBody is p's request body, its effect worded by the change
// model from the branch's render to p's (the same view as a CI summary).
func (l *Loop) proposalBody(rv *reviewed, p *review.Proposal, files map[string][]byte) string {
	effect := layout.NewChangeSummary(rv.branchReport, &p.Output.Report, nil, l.Config.MemberNames())
	body := propose.Body(p, effect, rv.branch, files)
	if st := rv.staged[p.Name]; st != nil && len(st.events) > 0 {
		body += rolloutPlan(st.state, rv.rollouts)
	}
	return body
}

// stale says whether an unchanged open proposal is rebuilt on base. It
// is when the branch's review record changed (the proposal changes it
// too, so it would conflict at once); otherwise, when the forge is polled
// (due), only if the branch has since changed a file the proposal also
// changes. Churn elsewhere leaves the proposal as it is: the forge merges
// changes to different files cleanly, so a quiet proposal costs no pushes.
func (l *Loop) stale(branch string, base plumbing.Hash, recordChanged, due bool) bool {
	if recordChanged {
		return true
	}
	if !due {
		return false
	}
	paths, known, err := l.Repo.Overlap(branch, base)
	switch {
	case err != nil:
		l.log().Warn("review: cannot compare a proposal with the branch; rebuilding it", "branch", branch, "err", err)
		return true
	case !known:
		return true // not built by this process yet
	case len(paths) > 0:
		l.log().Info("review: the branch changed files a proposal changes; rebuilding it on the branch", "branch", branch, "paths", paths)
		return true
	}
	return false
}

// wroteProposal recognizes the loop's own commits of proposal name (its
// author and its Proposal trailer, propose.Named), also those of an
// earlier process whose pushes this clone does not remember.
func (l *Loop) wroteProposal(name string) func(*object.Commit) bool {
	return func(c *object.Commit) bool {
		return l.Repo.Wrote(c) && propose.Named(c.Message) == name
	}
}

// proposalTree lays out proposal p's render as the tree its branch
// holds, with its own review record and pending conditions.
func (l *Loop) proposalTree(rv *reviewed, p *review.Proposal) (*tree, error) {
	ps := propose.ProposalState(rv.state, p)
	propose.MarkPending(&p.Output.Report, rv.proposals, ps)
	t, err := l.treeOfOutput(rv.rs, p.World.Snapshots, p.Output, ps)
	if err != nil {
		return nil, err
	}
	if st := rv.staged[p.Name]; st != nil {
		if err := t.stage(st); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (l *Loop) observeReview(st *layout.ReviewState) {
	if l.Metrics == nil {
		return
	}
	open, opening := 0, 0
	for _, p := range st.Proposals {
		if p.URL == "" {
			opening++
		} else {
			open++
		}
	}
	g := l.Metrics.ReviewProposals
	g.WithLabelValues("open").Set(float64(open))
	g.WithLabelValues("opening").Set(float64(opening))
	g.WithLabelValues("rejected").Set(float64(len(st.Rejected)))
	g.WithLabelValues("overridden").Set(float64(len(st.Overrides)))
}

// pollReview polls and counts a failure: the forge being down holds up
// only review, never churn, and the cycle goes on with what it last heard.
func (l *Loop) pollReview(ctx context.Context) (changed bool) {
	changed, err := l.poll(ctx)
	if err != nil {
		l.log().Warn("review: polling the forge failed; using what it said last", "err", err)
		if l.Metrics != nil {
			l.Metrics.ReviewErrors.WithLabelValues("poll").Inc()
		}
	}
	return changed
}

// afterApply is review mode's part of a cycle once the branch's commit is
// applied: bring the proposals up to date, and every Poll ask the forge
// and fetch the branch. It says whether another cycle is needed soon: a
// request was opened (its URL goes on the branch) or the forge or the
// branch changed (a merge to apply, a rejection to record).
func (l *Loop) afterApply(ctx context.Context, pub *published) (again bool) {
	due := l.Review.Due(l.now())
	if pub.review != nil {
		// Every proposal changes status/review.yaml against its base: when
		// the branch's copy changed too (a request opened, merged, closed),
		// a proposal left on the old base would conflict at once, so it is
		// rebuilt now; other overlaps wait for the poll (stale).
		opened, err := l.propose(ctx, pub.commit, pub.review, !propose.SameState(pub.review.prev, pub.review.state), due)
		if err != nil {
			l.Review.Dirty()
			l.log().Error("review: proposals not brought up to date", "err", err)
			if l.Metrics != nil {
				l.Metrics.ReviewErrors.WithLabelValues("propose").Inc()
			}
		}
		l.observeReview(pub.review.state)
		again = opened
	}
	if due && l.pollReview(ctx) {
		again = true
	}
	return again
}
