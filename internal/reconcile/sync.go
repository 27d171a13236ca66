// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Outcome is what one cycle did.
type Outcome struct {
	// Commit is the commit applied: the new one, or HEAD when nothing
	// changed.
	Commit    plumbing.Hash
	Committed bool
	Collected []clusters.Result
	Applied   []*apply.Result
	Report    *render.Report
	Duration  time.Duration
	// Took is how long each phase of the cycle took.
	Took Phases
	// SucceededAt is when the cycle ended, if Successful; zero otherwise.
	SucceededAt time.Time
	// Again asks for another cycle soon: review mode opened a request
	// whose URL the branch's record does not have yet.
	Again bool
	// WakeAt, when set, asks for a cycle then even if nothing changes: a
	// rollout's wave ends its soak.
	WakeAt time.Time
}

// Successful says whether the cycle kept the ClusterSet in step: the
// commit landed (or nothing changed) and every member that was read was
// applied without error. A member that could not be read, or an object a
// member refused, does not make it unsuccessful: those have their own
// alerts, and letting one dead member mask every other would leave "no
// successful cycle" firing for as long as that member is down, hiding a
// real wedge. A member that was read but could not be applied does:
// nothing else reports that its state is falling behind.
func (o *Outcome) Successful() bool {
	if o.Report == nil {
		return false // publish failed: nothing was committed or applied
	}
	for _, a := range o.Applied {
		if a.Err != nil {
			return false
		}
	}
	return true
}

// Phases is the time a cycle spent reading the members, rendering and
// publishing the commit, and applying it.
type Phases struct {
	Read, Publish, Apply time.Duration
}

// FailedMembers lists the member problems of the cycle, sorted: members
// that could not be read or applied, live objects left out because they do
// not load, rendered objects a member refused, and rendered names a user's
// object already holds. Each is also on the export's status.
func (o *Outcome) FailedMembers() []string {
	var out []string
	for _, r := range o.Collected {
		if r.Err != nil {
			out = append(out, fmt.Sprintf("%s: read: %v", r.Member, r.Err))
		}
		if r.Snapshot != nil {
			for _, rj := range r.Snapshot.Rejected {
				out = append(out, fmt.Sprintf("%s: cannot load %s %s/%s, its export is left out: %s", r.Member, rj.Kind, rj.Namespace, rj.Name, rj.Message))
			}
		}
	}
	out = append(out, applyProblems(o.Applied)...)
	sort.Strings(out)
	return out
}

// PartialError is returned by Sync when the commit landed but some
// members could not be read or applied: the others are done.
type PartialError struct{ Failed []string }

func (e *PartialError) Error() string {
	return fmt.Sprintf("%d member problem(s): %s", len(e.Failed), strings.Join(e.Failed, "; "))
}

// RepoError is returned by Sync when the repository could not be updated;
// nothing was applied.
type RepoError struct{ Err error }

func (e *RepoError) Error() string { return e.Err.Error() }
func (e *RepoError) Unwrap() error { return e.Err }

// Sync runs one cycle: read every member, render on top of the last
// commit, commit and push when a byte changed, then apply that commit to
// every member that could be read. A member that fails does not stop the
// others; it is named in a *PartialError.
func (l *Loop) Sync(ctx context.Context) (*Outcome, error) {
	start := time.Now()
	out := &Outcome{}
	t := l.Config.Spec.Sync.Timings()
	out.Collected = l.source().Collect(ctx, t.MemberTimeout)
	out.Took.Read = time.Since(start)
	for _, r := range out.Collected {
		l.observeMember(r)
	}

	if l.Review != nil {
		if l.Review.Never() {
			// A process's first cycle (each run of a CronJob's sync) asks
			// the forge before it renders; later ones after they apply.
			l.pollReview(ctx)
		} else if l.Review.Due(l.now()) {
			// A cycle that polls also rebuilds the proposals the branch
			// has overlapped (stale), which needs a render even when
			// nothing else changed.
			l.Review.Dirty()
		}
	}

	pubStart := time.Now()
	pctx, cancel := context.WithTimeout(ctx, publishTimeout(t.MemberTimeout))
	pub, err := l.publish(pctx, out.Collected)
	cancel()
	out.Took.Publish = time.Since(pubStart)
	if err != nil {
		l.finish(out, start, "error")
		return out, err
	}
	out.Commit, out.Committed, out.Report = pub.commit, pub.changed, pub.report
	if pub.changed {
		l.log().Info("committed", "commit", pub.commit.String()[:12], "subject", firstLine(pub.message))
		if l.Metrics != nil {
			l.Metrics.Commits.Inc()
		}
	}
	l.observeReport(pub.report)

	out.Collected = pub.collected
	if l.Fence != nil {
		if err := l.Fence(); err != nil {
			l.finish(out, start, "error")
			return out, err
		}
	}
	applyStart := time.Now()
	out.Applied = l.applyFiles(ctx, pub.commit, pub.files, pub.report, readable(out.Collected), false, pub.change, pub.tree)
	out.Took.Apply = time.Since(applyStart)
	if again, due := l.observeRollouts(ctx, pub, out.Applied); again {
		out.Again = true
	} else if !due.IsZero() {
		out.WakeAt = due
	}
	if l.Review != nil {
		// After apply: proposals and the forge never delay the data path.
		out.Again = l.afterApply(ctx, pub) || out.Again
	}
	if out.Successful() {
		out.SucceededAt = l.now()
		if l.Metrics != nil {
			l.Metrics.LastSuccessfulCycle.Set(float64(out.SucceededAt.UnixNano()) / 1e9)
		}
	}
	if failed := out.FailedMembers(); len(failed) > 0 {
		l.finish(out, start, "partial")
		return out, &PartialError{Failed: failed}
	}
	l.finish(out, start, "ok")
	return out, nil
}

// publishTimeout bounds following the branch, rendering, committing
// and pushing, retries and a re-read of the members included: a Git
// server that hangs holds the cycle no longer. Reads and applies have
// their own deadlines, per member.
func publishTimeout(memberTimeout time.Duration) time.Duration {
	return max(4*memberTimeout, time.Minute)
}

// published is one cycle's commit and what apply gets.
type published struct {
	// collected is what the commit was rendered from: the first read, or
	// after a rejected push the read made then.
	collected []clusters.Result
	commit    plumbing.Hash
	changed   bool
	message   string
	// files and report are what the commit holds, from memory (see
	// publish).
	files  map[string][]byte
	report *render.Report
	// tree is the render they are, when it is the loop's own (not a
	// migration's): apply takes the members' generations and snapshots
	// from it.
	tree *tree
	// review is what review mode does after the commit; nil outside it
	// and when the render was reused (its proposals are pushed already).
	review *reviewed
	// change is what the commit changed, when this cycle made it: the
	// members' Events tell it once, as the commit is first applied.
	change *change.Set
}

// syncIndex stages what the commits since the last idle cycle changed
// (gitsync.Repo.SyncIndex), now that a cycle has nothing to commit. A
// failure leaves `git status` in the workdir unclean, not the cycle.
func (l *Loop) syncIndex() {
	if err := l.Repo.SyncIndex(); err != nil {
		l.log().Warn("could not bring the index of the workdir up to date", "error", err.Error())
	}
}

// publish renders on top of HEAD, commits and pushes when a byte changed,
// and returns what to apply.
//
// Apply gets the files and report of the last render, not a read of the
// commit back from Git: they are the same bytes. Commit decided "nothing
// changed" only because every rendered file's blob hash equals HEAD's and
// HEAD holds nothing else under the roots, and otherwise committed exactly
// those blobs; so the commit's tree under the roots is this map. The
// report is the one these status files were written from, warnings
// included, where reading it back would have lost them. Only apply --ref
// reads a commit (ApplyRef).
//
// A render that changed nothing is kept, with what it was made from; a
// cycle made from the same things reuses it (lastUnchanged) and goes
// straight to apply, whose own memories then send nothing.
func (l *Loop) publish(ctx context.Context, collected []clusters.Result) (*published, error) {
	if err := l.loadLineage(ctx); err != nil {
		return nil, &RepoError{err}
	}
	head, rs, err := l.followAndResolve(ctx, collected)
	if err != nil {
		return nil, l.followError(err)
	}
	migrated, err := l.migrate(ctx, head)
	if err != nil {
		return nil, &RepoError{err}
	}
	if migrated != nil {
		if head, rs, err = l.followAndResolve(ctx, collected); err != nil {
			return nil, l.followError(err)
		}
	}
	if u := l.lastUnchanged(rs); u != nil {
		l.syncIndex()
		l.recordPush(ctx, head, u.tree.members())
		return &published{collected: collected, commit: head, files: u.tree.files, report: u.tree.report, tree: u.tree}, nil
	}
	t := l.Config.Spec.Sync.Timings()
	var (
		last        *tree
		lastMsg     string
		lastChanges *gitsync.Changes
	)
	hash, changed, err := gitsync.Publish(ctx, l.Repo, t.PushRetries,
		func(ctx context.Context) (map[string][]byte, []string, gitsync.Message, error) {
			head, err := l.Repo.Head()
			if err != nil {
				return nil, nil, nil, err
			}
			// After a rejected push the branch was reset to the commit
			// that won, written by someone who read the members after
			// this cycle did (a new leader, another process). Rendering
			// this cycle's older read on top of it would take back what
			// that commit added, an export that is live say: the members
			// are read again instead.
			if rs.head != head {
				l.log().Info("the branch moved while this cycle ran; reading the members again", "head", head.String()[:12])
				collected = l.source().Collect(ctx, t.MemberTimeout)
				for _, r := range collected {
					l.observeMember(r)
				}
				if rs, err = l.resolve(head, collected); err != nil {
					return nil, nil, nil, err
				}
			}
			tr, err := l.render(rs)
			if err != nil {
				return nil, nil, nil, err
			}
			last, lastMsg, lastChanges = tr, "", nil
			if tr.changed != nil {
				l.Repo.ExpectChanges(tr.since, tr.changed)
			}
			return tr.files, layout.Roots, func(c *gitsync.Changes) string {
				lastMsg, lastChanges = tr.message(c), c
				return lastMsg
			}, nil
		})
	if err != nil {
		l.setUnchanged(nil)
		return nil, &RepoError{fmt.Errorf("update repository: %w", err)}
	}
	if changed {
		l.setUnchanged(nil)
		l.advanceCommitted(rs.head, hash, last.files, last.joined, lastChanges)
	} else {
		l.setUnchanged(&unchangedRender{resolved: rs, tree: last})
		l.syncIndex()
	}
	l.recordPush(ctx, hash, last.members())
	pub := &published{collected: collected, commit: hash, changed: changed, message: lastMsg, files: last.files, report: last.report, review: last.review, tree: last}
	if !changed && migrated != nil {
		// The migration is the cycle's commit: apply it, and say so.
		pub.changed, pub.message, last.prev = true, migrated.message, migrated.prev
		pub.tree = nil
	}
	if pub.changed {
		// A report the commit did not rewrite did not change.
		var only map[string]bool
		if changed && lastChanges != nil {
			only = layout.ReportsChanged(lastChanges.Written, lastChanges.Removed)
		}
		set := change.BetweenIn(last.prev, last.report, only)
		pub.change = &set
	}
	return pub, nil
}

// followError is what publish returns when the branch could not be
// followed or its head resolved.
func (l *Loop) followError(err error) error {
	if isRefusal(err) {
		return &RepoError{l.refusalError(err)}
	}
	return &RepoError{fmt.Errorf("update repository: %w", err)}
}

// followAndResolve follows the branch and resolves the snapshots on its
// head. A refusal of the branch that a person has answered since (lineage
// accept) follows once more.
func (l *Loop) followAndResolve(ctx context.Context, collected []clusters.Result) (plumbing.Hash, *resolved, error) {
	head, rs, err := l.followed1(ctx, collected)
	if isRefusal(err) && l.reaccepted(ctx) {
		head, rs, err = l.followed1(ctx, collected)
	}
	if isRefusal(err) {
		l.reportRefusal(ctx, err)
	}
	if err == nil {
		l.announceHeld(ctx, rs)
	}
	return head, rs, err
}

func (l *Loop) followed1(ctx context.Context, collected []clusters.Result) (plumbing.Hash, *resolved, error) {
	if err := l.follow(ctx); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	head, err := l.Repo.Head()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	rs, err := l.resolve(head, collected)
	if err != nil && !isRefusal(err) {
		rs, err = l.resolveFetched(ctx, head, collected, err)
	}
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return rs.head, rs, nil
}

// resolveFetched is what publish does when the local head does not load
// (cause): a person pushed a commit the loop refuses, say an edited
// status/review.yaml, and a rejected push fetched it. Under run nothing
// else fetches the branch, so without this the loop would stay on that
// commit after the branch was mended. It fetches, and resolves again when
// the branch has moved; otherwise cause stands.
func (l *Loop) resolveFetched(ctx context.Context, head plumbing.Hash, collected []clusters.Result, cause error) (*resolved, error) {
	if err := l.Repo.ResetToRemote(ctx); err != nil {
		return nil, fmt.Errorf("%w (and fetching the branch again: %v)", cause, err)
	}
	moved, err := l.Repo.Head()
	if err != nil {
		return nil, err
	}
	if moved == head {
		return nil, cause
	}
	l.log().Info("the branch's last commit did not load; fetched it again, and it moved",
		"from", head.String()[:12], "to", moved.String()[:12], "error", cause.Error())
	return l.resolve(moved, collected)
}

// unchangedRender is a render that, committed on top of the commit it
// was made on, changed nothing there and was pushed.
type unchangedRender struct {
	*resolved
	tree *tree
}

// lastUnchanged returns the last unchanged render when rs is made from
// the same things: the same commit (so the same committed allocations and
// fallbacks), the same normalized snapshot bytes of every member and the
// same health. Render is a function of these and the config, so it would
// give the same files, which would again change nothing: the cycle skips
// render, serialization and the hash of every file against HEAD. A new
// commit (ours or anyone's), a changed byte of any member's snapshot or a
// change of reachability renders again.
func (l *Loop) lastUnchanged(rs *resolved) *unchangedRender {
	l.cacheMu.Lock()
	u := l.unchanged
	l.cacheMu.Unlock()
	if u == nil || u.head != rs.head || u.reviewGen != rs.reviewGen || u.rolloutGen != rs.rolloutGen || !bytes.Equal(u.health, rs.health) || !maps.EqualFunc(u.res.Files, rs.res.Files, bytes.Equal) {
		return nil
	}
	return u
}

func (l *Loop) setUnchanged(u *unchangedRender) {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	l.unchanged = u
}

// readable lists the members whose read succeeded: applying to a member
// that just failed to answer a list would only fail again, and slower.
func readable(results []clusters.Result) map[string]bool {
	ok := map[string]bool{}
	for _, r := range results {
		if r.Err == nil {
			ok[r.Member] = true
		}
	}
	return ok
}

func (l *Loop) finish(out *Outcome, start time.Time, outcome string) {
	out.Duration = time.Since(start)
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	reused := 0
	for _, r := range out.Collected {
		if r.Reused {
			reused++
		}
	}
	last := slog.Any("last_successful_cycle", nil)
	if !out.SucceededAt.IsZero() {
		last = slog.String("last_successful_cycle", out.SucceededAt.UTC().Format(time.RFC3339))
	}
	// The same figures as the metrics, so that the CronJob, which serves
	// none, can be alerted on from its log alone.
	l.log().Info("cycle done", "outcome", outcome, "duration", ms(out.Duration), "committed", out.Committed,
		"successful", !out.SucceededAt.IsZero(), last,
		"members_listed", len(out.Collected)-reused, "members_reused", reused,
		"took", slog.GroupValue(slog.String("read", ms(out.Took.Read)),
			slog.String("publish", ms(out.Took.Publish)), slog.String("apply", ms(out.Took.Apply))),
		"members", memberFigures(out))
	if l.Metrics != nil {
		l.Metrics.CycleDuration.WithLabelValues(outcome).Observe(out.Duration.Seconds())
		l.Metrics.Cycles.WithLabelValues(outcome).Inc()
		l.Metrics.PhaseDuration.WithLabelValues("read").Observe(out.Took.Read.Seconds())
		l.Metrics.PhaseDuration.WithLabelValues("publish").Observe(out.Took.Publish.Seconds())
		if outcome != "error" { // an error is a cycle that never got to apply
			l.Metrics.PhaseDuration.WithLabelValues("apply").Observe(out.Took.Apply.Seconds())
		}
	}
}

// memberFigures is each member's read time, reachability (with the
// reason class when it could not be read) and, when it was applied, the
// objects it did not take: a group keyed by member name.
func memberFigures(out *Outcome) slog.Value {
	failed := map[string]int{}
	for _, a := range out.Applied {
		failed[a.Member] = len(a.Refused)
	}
	var members []slog.Attr
	for _, r := range out.Collected {
		attrs := []slog.Attr{slog.String("read", r.Took.Round(time.Millisecond).String()), slog.Bool("reachable", r.Err == nil)}
		if r.Err != nil {
			attrs = append(attrs, slog.String("reason", r.Reason))
		}
		if r.Namespaces != nil {
			attrs = append(attrs, slog.Int("namespaces_listed", len(r.Namespaces)))
		}
		if n, applied := failed[r.Member]; applied {
			attrs = append(attrs, slog.Int("failed_objects", n))
		}
		members = append(members, slog.Attr{Key: r.Member, Value: slog.GroupValue(attrs...)})
	}
	return slog.GroupValue(members...)
}

func (l *Loop) observeMember(r clusters.Result) {
	if r.Err != nil {
		l.log().Warn("member unreadable", "member", r.Member, "reason", r.Reason, "err", r.Err)
	}
	if l.Metrics == nil {
		return
	}
	m := l.Metrics
	m.MemberReadDuration.WithLabelValues(r.Member).Observe(r.Took.Seconds())
	v := 0.0
	if r.Err == nil {
		v = 1
		m.MemberLastRead.WithLabelValues(r.Member).Set(float64(l.now().UnixNano()) / 1e9)
	}
	m.MemberReachable.WithLabelValues(r.Member).Set(v)
	for _, reason := range clusters.Reasons {
		s := 0.0
		if r.Err != nil && r.Reason == reason {
			s = 1
		}
		m.MemberUnreachableReason.WithLabelValues(r.Member, reason).Set(s)
	}
}

func (l *Loop) observeReport(r *render.Report) {
	if l.Metrics == nil || r == nil {
		return
	}
	exports, imports, conflicts := 0, 0, 0
	kinds := map[render.ProblemKind]int{}
	for _, s := range r.Services {
		exports += len(s.Exports)
		imports += len(s.ImportedBy)
		conflicted := false
		for _, p := range s.Problems() {
			kinds[p.Kind]++
			conflicted = conflicted || p.Kind == render.ProblemConflict
		}
		if conflicted {
			conflicts++
		}
	}
	for _, k := range render.ProblemKinds {
		l.Metrics.Problems.WithLabelValues(string(k)).Set(float64(kinds[k]))
	}
	l.Metrics.Exports.Set(float64(exports))
	l.Metrics.Imports.Set(float64(imports))
	l.Metrics.Conflicts.Set(float64(conflicts))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
