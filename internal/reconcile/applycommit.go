// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// applyCommit applies commit to the members in only (all members when
// only is nil), each independently and in parallel.
func (l *Loop) applyCommit(ctx context.Context, commit plumbing.Hash, only map[string]bool, allowEmpty bool) ([]*apply.Result, error) {
	files, report, err := l.readCommit(commit)
	if err != nil {
		return nil, err
	}
	return l.applyFiles(ctx, commit, files, report, only, allowEmpty, nil, nil), nil
}

// readCommit reads what apply needs from commit: its files under
// clusters/ and status/ and the report they hold.
func (l *Loop) readCommit(commit plumbing.Hash) (map[string][]byte, *render.Report, error) {
	files, err := l.Repo.Files(commit, layout.ClustersDir, layout.StatusDir)
	if err != nil {
		return nil, nil, &RepoError{fmt.Errorf("read commit %s: %w", commit.String()[:12], err)}
	}
	report, err := layout.ReadReport(files)
	if err != nil {
		return nil, nil, fmt.Errorf("commit %s: %w", commit.String()[:12], err)
	}
	return files, report, nil
}

// applyFiles applies one commit's files to the members in only (all when
// only is nil); set, when the commit is new, is what it changed. t, when
// the files are a render of the loop's own, says which members the render
// left as they were (tree.gens) and holds each member's snapshot: a member
// that settled at its generation is not applied again (see settled).
func (l *Loop) applyFiles(ctx context.Context, commit plumbing.Hash, files map[string][]byte, report *render.Report, only map[string]bool, allowEmpty bool, set *change.Set, t *tree) []*apply.Result {
	if l.Apply == ApplyNone && only != nil {
		return nil
	}
	var targets []*apply.Applier
	var settled []*apply.Result
	for _, m := range l.Members.Members() {
		if only != nil && !only[m.Name] {
			continue
		}
		if m.Err != nil {
			continue
		}
		if only != nil && l.Apply != ApplyStatusOnly && t != nil && t.gens != nil && l.memory(m.Name).Settled(t.gens[m.Name], l.now()) {
			// Nothing this member holds changed since it took all of it,
			// and its memory still vouches for that (it would send
			// nothing): not built, prepared or compared again.
			settled = append(settled, &apply.Result{Member: m.Name, Settled: true})
			l.log().Debug("member left alone: nothing it holds changed since it took all of it", "member", m.Name)
			continue
		}
		a := apply.New(m.Client, l.Config.Metadata.Name, l.contractOf(m.Name), l.log())
		a.AllowEmpty = allowEmpty
		a.Budget = applyBudget(l.Config.Spec.Sync.Timings().MemberTimeout)
		switch {
		case only == nil:
			// apply --ref always applies in full.
		case l.Apply == ApplyStatusOnly:
			a.StatusOnly = true
		default:
			a.Memory = l.memory(m.Name)
		}
		a.Builds = l.buildCache(m.Name)
		a.Events, a.Commit, a.Change = l.eventsFor(m), commit.String(), set
		if t != nil {
			a.Inputs = t.joined[m.Name]
		}
		targets = append(targets, a)
	}
	results := apply.ApplyAll(ctx, targets, files, report)
	for i, r := range results {
		if a := targets[i]; a.Memory != nil && t != nil && t.gens != nil && r.Err == nil && len(r.Refused) == 0 && len(r.Collisions) == 0 {
			a.Memory.Settle(t.gens[r.Member])
		}
	}
	l.observeApply(results)
	if len(settled) == 0 {
		return results
	}
	// In the members' order, as without them.
	byMember := map[string]*apply.Result{}
	for _, r := range append(results, settled...) {
		byMember[r.Member] = r
	}
	ordered := make([]*apply.Result, 0, len(byMember))
	for _, m := range l.Members.Members() {
		if r := byMember[m.Name]; r != nil {
			ordered = append(ordered, r)
		}
	}
	return ordered
}

// perObject is what each object a member is sent adds to its apply's
// deadline: about 2.5 times what a first sync takes per object on shared
// cores (4,000 objects a member in 2 min 34 s, docs/running.md). An
// object costs about four requests and eight are in flight, so a member
// that answers each within about 200 ms still keeps it.
const perObject = 100 * time.Millisecond

// applyBudget is each member's apply deadline: three memberTimeouts, plus
// perObject for each object sent. The fixed part is three reads' worth:
// an apply lists about ten kinds to prune and reads what it might collide
// with, where a read lists seven; one memberTimeout cut a healthy member's
// prune on loaded cores (test/e2e, three apiservers and Gitea on 2 cores).
func applyBudget(memberTimeout time.Duration) apply.Budget {
	return apply.Budget{Base: 3 * memberTimeout, PerObject: perObject}
}

// ApplyRef applies what commit holds to every member, the apply --ref
// command: nothing is read from the clusters and nothing is committed. A
// member the commit has no directory for fails with apply.ErrNoMemberDir
// and is left alone, unless allowEmpty: then everything applied there is
// pruned. With spec.git.verify, a commit that does not verify is refused
// with a *gitsync.VerifyError before anything is read or applied.
func (l *Loop) ApplyRef(ctx context.Context, commit plumbing.Hash, allowEmpty bool) ([]*apply.Result, error) {
	if err := l.verify(commit); err != nil {
		return nil, err
	}
	results, err := l.applyCommit(ctx, commit, nil, allowEmpty)
	if err != nil {
		return nil, err
	}
	var failed []string
	for _, m := range l.Members.Members() {
		if m.Err != nil {
			failed = append(failed, fmt.Sprintf("%s: connect: %v", m.Name, m.Err))
		}
	}
	failed = append(failed, applyProblems(results)...)
	if len(failed) > 0 {
		return results, &PartialError{Failed: failed}
	}
	return results, nil
}

// applyProblems lists the members whose apply failed and the objects a
// member did not take (refused by its apiserver, or a collision).
func applyProblems(results []*apply.Result) []string {
	var out []string
	for _, r := range results {
		if r.Err != nil {
			out = append(out, fmt.Sprintf("%s: apply: %v", r.Member, r.Err))
		}
		for _, rf := range r.Refused {
			out = append(out, fmt.Sprintf("%s: not applied: %s", r.Member, rf))
		}
	}
	return out
}

func (l *Loop) observeApply(results []*apply.Result) {
	if l.Metrics == nil {
		return
	}
	for _, r := range results {
		c := l.Metrics.ApplyResults
		c.WithLabelValues(r.Member, "created").Add(float64(len(r.Created)))
		c.WithLabelValues(r.Member, "configured").Add(float64(len(r.Configured)))
		c.WithLabelValues(r.Member, "unchanged").Add(float64(len(r.Unchanged)))
		c.WithLabelValues(r.Member, "deleted").Add(float64(len(r.Deleted)))
		c.WithLabelValues(r.Member, "skipped").Add(float64(len(r.Skipped)))
		c.WithLabelValues(r.Member, "refused").Add(float64(len(r.Refused)))
		// Added to even when 0, so the series is there before the first
		// failure for increase() to see it.
		failed := 0.0
		if r.Err != nil {
			failed = 1
		}
		c.WithLabelValues(r.Member, "failed").Add(failed)
		// Refused holds the collisions and the contract's refusals too.
		l.Metrics.MemberFailedObjects.WithLabelValues(r.Member).Set(float64(len(r.Refused)))
	}
}

// contractOf is what member's directory may hold, from the config.
func (l *Loop) contractOf(member string) contract.Member {
	for i := range l.Config.Spec.Members {
		if m := &l.Config.Spec.Members[i]; m.Name == member {
			return contract.MemberOf(l.Config, m)
		}
	}
	return contract.Member{Name: member}
}
