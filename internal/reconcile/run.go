// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
)

// RunOptions tune the controller.
type RunOptions struct {
	// Grace bounds how long a cycle in progress may take to finish once
	// the controller is asked to stop.
	Grace time.Duration
	// OnCycle, when set, is called after every cycle (tests and the
	// benchmark use it to see progress).
	OnCycle func(*Outcome, error)
	// Ready is called once the first cycle has finished.
	Ready func()
	// Probes, when set, fail liveness once no cycle has completed for
	// LivenessCycles resyncIntervals (0: never).
	Probes         *Probes
	LivenessCycles int
}

// livenessLimit is how long a leader may go without completing a cycle
// before it is declared wedged: cycles resync intervals, but never less
// than one interval plus the longest a cycle may take, so that a slow
// cycle that keeps its deadline is not mistaken for a wedged one.
func livenessLimit(cycles int, resync, cycle time.Duration) time.Duration {
	if cycles <= 0 {
		return 0
	}
	return max(time.Duration(cycles)*resync, resync+cycle)
}

// Run is the controller: it watches every member, and after a change (or
// every resyncInterval) runs a cycle, paced so that at most one commit
// lands per minCommitInterval. It returns when ctx ends, after letting a
// cycle in progress finish within opts.Grace.
func (l *Loop) Run(ctx context.Context, opts RunOptions) error {
	t := l.Config.Spec.Sync.Timings()
	if opts.Grace == 0 {
		opts.Grace = 30 * time.Second
	}
	if opts.Probes != nil {
		opts.Probes.lead(livenessLimit(opts.LivenessCycles, t.ResyncInterval, cycleAllowance(t.MemberTimeout, opts.Grace)))
		defer opts.Probes.standBy()
	}
	events := make(chan string, 1)
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- l.Members.Watch(ctx, func(member string) {
			select {
			case events <- member:
			default: // a signal is already pending; the cycle reads everything anyway
			}
		})
	}()

	p := pacer{debounce: t.Debounce, minCommitInterval: t.MinCommitInterval}
	p.changed(l.now()) // the first cycle runs at start
	resync := time.NewTicker(t.ResyncInterval)
	defer resync.Stop()
	// In review mode a merge on the forge is seen by polling it.
	var poll <-chan time.Time
	if l.Review != nil && l.Review.Poll > 0 {
		tk := time.NewTicker(l.Review.Poll)
		defer tk.Stop()
		poll = tk.C
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	// wake ends a rollout wave's soak (Outcome.WakeAt).
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	ready := false
	for {
		if at, ok := p.due(); ok {
			resetTimer(timer, at.Sub(l.now()))
		}
		select {
		case <-ctx.Done():
			<-watchDone
			return nil
		case err := <-watchDone:
			if ctx.Err() != nil {
				return nil
			}
			return errors.Join(errors.New("watching members stopped"), err)
		case <-events:
			p.changed(l.now())
		case <-poll:
			p.changed(l.now())
		case <-wake.C:
			p.changed(l.now())
		case <-resync.C:
			// A resync reads every member, whatever its watch says.
			l.Members.Forget()
			p.changed(l.now())
		case <-timer.C:
			at, ok := p.due()
			if !ok || l.now().Before(at) {
				continue
			}
			p.started()
			cctx, done := graced(ctx, opts.Grace)
			out, err := l.Sync(cctx)
			done()
			if opts.Probes != nil {
				opts.Probes.cycled()
			}
			if err != nil {
				l.log().Error("cycle failed", "err", err)
			}
			if retryPublish(err) {
				d := p.failed(l.now(), rand.Float64())
				l.log().Info("publishing failed; retrying", "in", d.Round(time.Millisecond).String())
				if l.Metrics != nil {
					l.Metrics.PublishRetries.Inc()
				}
			} else if !errors.As(err, new(*RepoError)) {
				p.published()
			}
			if out != nil && out.Committed {
				p.committed(l.now())
			}
			if out != nil && out.Again {
				p.changed(l.now())
			}
			if out != nil && !out.WakeAt.IsZero() {
				resetTimer(wake, out.WakeAt.Sub(l.now()))
			}
			if opts.OnCycle != nil {
				opts.OnCycle(out, err)
			}
			if !ready && opts.Ready != nil {
				ready = true
				opts.Ready()
			}
		}
	}
}

// retryPublish says whether a cycle that failed with err is retried
// soon: when it could not update the repository, except when this
// process may no longer write (fenced), or the branch's commit is refused
// by verification or the branch by its lineage, which no retry mends.
func retryPublish(err error) bool {
	var repoErr *RepoError
	return errors.As(err, &repoErr) && !errors.Is(err, ErrFenced) && !errors.As(err, new(*gitsync.VerifyError)) &&
		!isRefusal(err)
}

// graced is ctx for one cycle: a shutdown (ctx done) cancels it only
// after grace, since a half-done push or apply is worse than a late exit.
// The cycle has no deadline of its own: each phase has one (each member's
// read and apply, the publish), so the work sets how long it may take
// and one slow member does not use up the others' time.
// done releases it.
func graced(ctx context.Context, grace time.Duration) (context.Context, func()) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return cctx, func() {
		stop()
		cancel()
	}
}

// cycleAllowance is what liveness allows a cycle on top of the resync
// interval before it calls the leader wedged: a publish's deadline, a
// read's and an apply's fixed part (applyBudget), or the grace.
func cycleAllowance(member, grace time.Duration) time.Duration {
	return max(publishTimeout(member)+member+applyBudget(member).Base, grace)
}

func resetTimer(t *time.Timer, d time.Duration) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(max(d, 0))
}
