// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Start begins the rollout of a change to service: its first wave is
// what the commit that starts it renders.
func Start(service string, kinds []v1alpha1.RolloutKind, waves []Wave, before []Export, importers []string, target string, now time.Time) *Rollout {
	r := &Rollout{Service: service, Kinds: kinds, Reached: 1, Started: now, WaveAt: now, Target: target,
		Importers: importers, Before: before}
	for _, w := range waves {
		ws := WaveState{Name: w.Name, Members: w.Members}
		if w.Soak > 0 {
			ws.Soak = w.Soak.String()
		}
		r.Waves = append(r.Waves, ws)
	}
	// An empty first wave would hold nothing to gate.
	for r.Reached < len(r.Waves) && len(r.Waves[r.Reached-1].Members) == 0 {
		r.Reached++
	}
	return r
}

// Behind are the members r has not reached: those of the waves after
// the last one committed, or every member once it is aborted.
func (r *Rollout) Behind() []string {
	var out []string
	for i, w := range r.Waves {
		if r.Aborted || i >= r.Reached {
			out = append(out, w.Members...)
		}
	}
	return out
}

// Current is the wave last committed.
func (r *Rollout) Current() WaveState { return r.Waves[r.Reached-1] }

// Soak is the current wave's soak time.
func (r *Rollout) Soak() time.Duration {
	d, _ := time.ParseDuration(r.Current().Soak)
	return d
}

// The states of a rollout (StateName).
const (
	StateRolling = "rolling"
	StatePaused  = "paused"
	StateAborted = "aborted"
)

// States are every StateName, in that order.
var States = []string{StateRolling, StatePaused, StateAborted}

// StateName is rolling (a wave soaks or waits for its gates), paused (a
// gate failed) or aborted.
func (r *Rollout) StateName() string {
	switch {
	case r.Aborted:
		return StateAborted
	case r.Paused != nil:
		return StatePaused
	}
	return StateRolling
}

// Note is where r stands, for the Ready message of the service's
// exports.
func (r *Rollout) Note() string {
	switch {
	case r.Aborted:
		return "rollout aborted: every member imports the service as before the change until its exports change again"
	case r.Paused != nil:
		return fmt.Sprintf("rollout %s; resume or abort it (mcs-gitops rollout resume|abort %s)", r.Paused, r.Service)
	}
	w := r.Current()
	note := fmt.Sprintf("rolling out: wave %d of %d (%s)", r.Reached, len(r.Waves), w.Name)
	if behind := r.Behind(); len(behind) > 0 {
		note += "; not yet in " + strings.Join(behind, ", ")
	}
	return note
}

// Supersede brings r in line with the exports live now (target, digest
// of the live exports; base, of r.Before). The rule, in order:
//   - the exports are back to what they were (target == base): nothing
//     is left to roll out, and r ends (done);
//   - the exports changed again (target != r.Target): the newer change
//     supersedes the one rolling out. The members already reached take
//     it at once (they follow the live exports), the others stay at
//     Before, and the wave in progress soaks again from now. An aborted
//     rollout starts again from its first wave.
func (r *Rollout) Supersede(target, base string, now time.Time) (done bool) {
	if target == base {
		return true
	}
	if target == r.Target {
		return false
	}
	r.Target, r.WaveAt = target, now
	r.Paused = nil
	if r.Aborted {
		r.Aborted, r.Reached = false, 1
	}
	return false
}

// Act carries out a person's request; it returns what it did, for the
// log and the commit message ("" when there was none).
func (r *Rollout) Act(now time.Time) string {
	req := r.Request
	r.Request = ""
	switch req {
	case Resume:
		if r.Paused == nil {
			return ""
		}
		r.Paused, r.WaveAt = nil, now
		return "resumed"
	case Abort:
		if r.Aborted {
			return ""
		}
		r.Aborted, r.Paused = true, nil
		return "aborted"
	}
	return ""
}

// Check is one member's gates for the wave it is in.
type Check struct {
	Member string
	// Unreachable: the member could not be read or applied.
	Unreachable bool
	// Gate names the first gate that does not hold, "" when all do;
	// Failed says it failed (the member refused an object) rather than
	// not holding yet.
	Gate, Message string
	Failed        bool
}

// Progress is what the loop has seen of a rollout's current wave since
// it was committed; it is not committed, so a new leader soaks the wave
// in progress again.
type Progress struct {
	Wave   int
	Target string
	// HeldSince is when every gate of the wave first held, and has held
	// since; zero while one does not.
	HeldSince time.Time
	// Waiting names what the wave waits for, "" when nothing; WaitingOn
	// is its member and gate alone, which a message that varies (a DNS
	// error naming a port) does not change.
	Waiting, WaitingOn string
	// Failed is a gate that failed: the next commit pauses the rollout.
	Failed *Pause
	// Skipped are members the wave goes on without (unreachable: Skip).
	Skipped []string
}

// Observe folds one cycle's checks of the current wave into p (reset
// when the wave or the target moved on).
func (r *Rollout) Observe(p *Progress, checks []Check, unreachable v1alpha1.RolloutUnreachable, now time.Time) {
	if p.Wave != r.Reached || p.Target != r.Target {
		*p = Progress{Wave: r.Reached, Target: r.Target}
	}
	p.Waiting, p.WaitingOn, p.Skipped = "", "", nil
	for _, c := range checks {
		switch {
		case c.Unreachable && unreachable == v1alpha1.RolloutSkip:
			p.Skipped = append(p.Skipped, c.Member)
		case c.Unreachable:
			p.Waiting = fmt.Sprintf("member %s cannot be read (unreachable: Block)", c.Member)
			p.WaitingOn = c.Member + " unreachable"
		case c.Failed:
			if p.Failed == nil {
				p.Failed = &Pause{Wave: r.Reached, Member: c.Member, Gate: c.Gate, Message: c.Message, Since: now}
			}
			p.Waiting = fmt.Sprintf("member %s: %s: %s", c.Member, c.Gate, c.Message)
			p.WaitingOn = c.Member + " " + c.Gate
		case c.Gate != "" && p.Waiting == "":
			p.Waiting = fmt.Sprintf("member %s: %s: %s", c.Member, c.Gate, c.Message)
			p.WaitingOn = c.Member + " " + c.Gate
		}
	}
	switch {
	case p.Waiting != "":
		p.HeldSince = time.Time{}
	case p.HeldSince.IsZero():
		p.HeldSince = now
	}
}

// Advance moves r on by what p saw: it pauses on a failed gate, commits
// the next wave once the current one's gates have held for its soak, and
// says done after the last. It returns what happened, "" when nothing.
func (r *Rollout) Advance(p *Progress, now time.Time) (event string, done bool) {
	if r.Aborted || r.Paused != nil || p == nil || p.Wave != r.Reached || p.Target != r.Target {
		return "", false
	}
	if p.Failed != nil {
		r.Paused = p.Failed
		return r.Paused.String(), false
	}
	if p.HeldSince.IsZero() || now.Sub(maxTime(p.HeldSince, r.WaveAt)) < r.Soak() {
		return "", false
	}
	for _, m := range p.Skipped {
		if !slices.Contains(r.Skipped, m) {
			r.Skipped = append(r.Skipped, m)
		}
	}
	for r.Reached < len(r.Waves) {
		r.Reached++
		r.WaveAt = now
		if w := r.Current(); len(w.Members) > 0 {
			return fmt.Sprintf("wave %d of %d (%s): %s", r.Reached, len(r.Waves), w.Name, strings.Join(w.Members, ", ")), false
		}
	}
	return "done", true
}

// Due is when r's current wave may move on, given p: zero when it waits
// for a gate, a person or nothing.
func (r *Rollout) Due(p *Progress) time.Time {
	if r.Aborted || r.Paused != nil || p == nil || p.HeldSince.IsZero() || p.Wave != r.Reached || p.Target != r.Target {
		return time.Time{}
	}
	return maxTime(p.HeldSince, r.WaveAt).Add(r.Soak())
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
