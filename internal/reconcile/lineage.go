// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/lineage"
)

// lineageState is what the loop knows of its branch's lineage: the
// record (in memory always, in Loop.Lineage when there is one), and the
// refusal last reported, so that a refusal repeated every cycle makes one
// Event.
type lineageState struct {
	loaded   bool
	rec      *lineage.Record
	accepted time.Time // the acceptance last taken
	refusal  string
}

// MissingSnapshotError is a member that cannot be read and whose
// snapshot the branch no longer holds, though the last commit the loop
// pushed did: a person removed inputs/<member>.yaml. Rendering without it
// would withdraw every export of a member that may be well.
type MissingSnapshotError struct {
	Member string
	// Commit is the last commit pushed, which held it.
	Commit string
}

func (e *MissingSnapshotError) Error() string {
	return fmt.Sprintf("member %s cannot be read, and the branch no longer holds its snapshot (%s), which the last commit pushed (%s) did: nothing is rendered without it (restore the files)",
		e.Member, layout.InputDir(e.Member), short(e.Commit))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// isRefusal reports whether err is the loop refusing its branch.
func isRefusal(err error) bool {
	return errors.As(err, new(*gitsync.RewrittenError)) || errors.As(err, new(*MissingSnapshotError))
}

// loadLineage reads the record once, before the first cycle follows the
// branch, and holds the Repo to its commit. Without the record a fresh
// clone would take any branch as the truth, so a record that cannot be
// read fails the cycle.
func (l *Loop) loadLineage(ctx context.Context) error {
	if l.Lineage == nil || l.line.loaded {
		return nil
	}
	rec, err := l.Lineage.Load(ctx)
	if err != nil {
		return err
	}
	l.adopt(rec)
	l.line.loaded = true
	return nil
}

// adopt takes rec as the lineage: the Repo must descend from its commit.
// A record of another tree says nothing about this one.
func (l *Loop) adopt(rec *lineage.Record) {
	if rec != nil && !rec.Same(l.Repo.Name()) {
		l.log().Warn("the lineage record is about another repository, branch or path; starting a new one",
			"record", l.Lineage.Where(), "repository", rec.Repository, "branch", rec.Branch, "path", rec.Path)
		rec = nil
	}
	if rec == nil {
		return
	}
	if a := rec.Accepted; a != nil && a.At.After(l.line.accepted) {
		l.line.accepted = a.At
		if l.line.loaded {
			l.log().Warn("a person accepted the branch as it is", "record", l.Lineage.Where(),
				"by", a.By, "reason", a.Reason, "at", a.At.Format(time.RFC3339), "previous", short(a.Previous), "from", short(rec.Commit))
		}
	}
	l.line.rec = rec
	var commit plumbing.Hash
	if rec.Commit != "" {
		commit = plumbing.NewHash(rec.Commit)
	}
	l.Repo.RequireDescent(commit)
}

// reaccepted reads the record again after a refusal: when a person
// accepted the branch since it was read, the loop takes the acceptance
// and returns true (follow again).
func (l *Loop) reaccepted(ctx context.Context) bool {
	if l.Lineage == nil {
		return false
	}
	rec, err := l.Lineage.Load(ctx)
	if err != nil || rec == nil || rec.Accepted == nil || !rec.Accepted.At.After(l.line.accepted) {
		return false
	}
	l.adopt(rec)
	l.line.refusal = ""
	return true
}

// reportRefusal says that the branch is refused: the metric each time,
// a log line and an Event on the record when the refusal is new.
func (l *Loop) reportRefusal(ctx context.Context, err error) {
	if l.Metrics != nil {
		l.Metrics.BranchRefused.Set(1)
	}
	msg := err.Error()
	if msg == l.line.refusal {
		return
	}
	l.line.refusal = msg
	l.log().Error("the branch is refused", "err", msg)
	l.managementEvent(ctx, "BranchRefused", "Refuse", msg+"; "+l.acceptHint())
}

// managementEvent writes a Warning Event on the loop's object in the
// management cluster (the lineage record), when there is one: what waits
// for a person. A failure is logged; the log line said it already.
func (l *Loop) managementEvent(ctx context.Context, reason, action, note string) {
	ev, ok := l.Lineage.(interface {
		Event(ctx context.Context, reason, action, note string, now time.Time) error
	})
	if !ok {
		return
	}
	if err := ev.Event(ctx, reason, action, note, l.now()); err != nil {
		l.log().Warn("no Event in the management cluster", "reason", reason, "err", err)
	}
}

// acceptHint says how a person lets the loop go on from a refused
// branch.
func (l *Loop) acceptHint() string {
	if l.Lineage == nil {
		return "mend the branch, or restart the loop to take it as it is"
	}
	return fmt.Sprintf("mend the branch, or take it as it is with `mcs-gitops lineage accept --reason TEXT`, which is recorded on %s", l.Lineage.Where())
}

// checkStandIns refuses a cycle in which a member that cannot be read
// would have no snapshot in Git, though the last commit pushed had one.
func (l *Loop) checkStandIns(results []clusters.Result, prev *layout.Committed) error {
	rec := l.line.rec
	if rec == nil {
		return nil
	}
	for _, r := range results {
		if r.Err == nil {
			continue
		}
		if _, ok := prev.Inputs[r.Member]; ok {
			continue
		}
		if _, known := slices.BinarySearch(rec.Members, r.Member); known {
			return &MissingSnapshotError{Member: r.Member, Commit: rec.Commit}
		}
	}
	return nil
}

// recordPush records commit, on the remote now, with the members whose
// snapshot files holds; in the store too when there is one. A store that
// cannot be written is logged: the record lags, and what it holds is
// still below the branch.
func (l *Loop) recordPush(ctx context.Context, commit plumbing.Hash, members []string) {
	if commit.IsZero() {
		return
	}
	if l.Metrics != nil {
		l.Metrics.BranchRefused.Set(0)
	}
	l.line.refusal = ""
	if old := l.line.rec; old != nil && old.Commit == commit.String() {
		return // the same commit holds the same snapshots
	}
	url, branch, path := l.Repo.Name()
	rec := &lineage.Record{Repository: url, Branch: branch, Path: path, Commit: commit.String(), Members: members}
	if l.line.rec != nil {
		rec.Accepted = l.line.rec.Accepted
	}
	l.line.rec = rec
	if l.Lineage == nil {
		return
	}
	if l.Fence != nil {
		if err := l.Fence(); err != nil {
			return
		}
	}
	if err := l.Lineage.Save(ctx, rec); err != nil {
		l.log().Warn("the pushed commit is not recorded outside the process; a restart checks the branch against an older one",
			"commit", commit.String()[:12], "err", err)
	}
}

// refusalError is a refusal with what a person can do about it.
func (l *Loop) refusalError(err error) error {
	return fmt.Errorf("%w; %s", err, l.acceptHint())
}
