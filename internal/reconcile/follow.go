// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"time"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/review/propose"
)

// followEvery is how often the loop fetches its branch at the most: the
// branch is a live input. A person's commit under clusters/ or status/
// stayed HEAD while the members kept what the loop had applied (it
// fetched only after a rejected push), and Flux in render-only mode would
// have applied it; a remote recreated empty stayed empty until the next
// change.
const followEvery = time.Minute

// follow fetches the branch when it is due (every followEvery, or the
// resync interval when that is shorter) and brings the clone in line:
// a branch gone is pushed again by the next push, a branch that moved on
// is reset to, and what a commit the loop did not write changed under
// inputs/, clusters/ or status/ is reported as drift, then rendered over
// by this cycle (a snapshot of a member that cannot be read stands in as
// the branch holds it). A branch that was rewritten is refused (*gitsync.RewrittenError);
// a fetch that fails only delays following, and the push will say more.
func (l *Loop) follow(ctx context.Context) error {
	now := l.now()
	every := min(followEvery, l.Config.Spec.Sync.Timings().ResyncInterval)
	l.cacheMu.Lock()
	due := l.followed.IsZero() || now.Sub(l.followed) >= every
	l.cacheMu.Unlock()
	if !due {
		return nil
	}
	before, err := l.Repo.Head()
	if err != nil {
		return err
	}
	if err := l.Repo.ResetToRemote(ctx); err != nil {
		if errors.As(err, new(*gitsync.RewrittenError)) {
			return err
		}
		l.log().Warn("fetching the branch failed; rendering on the last commit seen", "err", err)
		return nil
	}
	l.cacheMu.Lock()
	l.followed = now
	l.cacheMu.Unlock()
	after, err := l.Repo.Head()
	if err != nil || after == before || before.IsZero() {
		return err
	}
	foreign, err := l.Repo.Foreign(before, after, []string{layout.InputsDir, layout.ClustersDir, layout.StatusDir})
	if err != nil {
		l.log().Warn("cannot tell who changed the branch", "err", err)
		return nil
	}
	for _, c := range foreign {
		if isProposalMerge(c) {
			continue
		}
		l.log().Warn("drift: a commit the loop did not write changed rendered files; rendering over it",
			"commit", c.Hash.String()[:12], "author", c.Author, "subject", c.Subject, "files", len(c.Paths), "first", c.Paths[0])
		if l.Metrics != nil {
			l.Metrics.BranchDrift.Inc()
		}
	}
	return nil
}

// isProposalMerge recognizes a review-mode proposal merged on the forge:
// the merge commit, or a squash that kept the proposal's trailer.
func isProposalMerge(c gitsync.ForeignCommit) bool {
	return c.Merge || propose.Named(c.Message) != ""
}
