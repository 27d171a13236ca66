// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// staged is what a render records of the staged rollouts: the state
// status/rollouts.yaml gets, and what happened to them, said first in
// the commit message.
type staged struct {
	state  *rollout.State
	events []string
	// ended are the services whose rollout this render ended: it starts
	// no new one for them, since what it would stage is the way back
	// to what every member had, or a withdrawal.
	ended map[string]bool
}

// rollouts moves the committed rollouts on, for a render of snaps on
// top of rs: a person's request, a newer change or a change taken back
// (Supersede), a wave whose gates held for its soak or a gate that
// failed (Advance, from what the loop saw after its last apply).
func (l *Loop) rollouts(rs *resolved, snaps []*snapshot.Snapshot) (*staged, error) {
	st, err := copyState(rs.prev.Rollouts)
	if err != nil {
		return nil, err
	}
	now := l.now()
	out := &staged{state: &rollout.State{}, ended: map[string]bool{}}
	for _, r := range st.Rollouts {
		if what := r.Act(now); what != "" {
			out.events = append(out.events, fmt.Sprintf("%s rollout of %s", what, r.Service))
			l.log().Info("rollout "+what+" by request", "service", r.Service)
			// What the gates showed before the request is not what
			// they are to show after it.
			l.forgetProgress(r.Service)
		}
		ns, name, _ := strings.Cut(r.Service, "/")
		live := rollout.ExportsOf(snaps, ns, name)
		if len(live) == 0 {
			// A withdrawal is never staged: what the rollout would keep
			// imported is gone.
			out.events = append(out.events, fmt.Sprintf("end rollout of %s: no member exports it", r.Service))
			out.ended[r.Service] = true
			continue
		}
		if r.Supersede(rollout.Digest(live), rollout.Digest(r.Before), now) {
			out.events = append(out.events, fmt.Sprintf("end rollout of %s: its exports are back as they were", r.Service))
			out.ended[r.Service] = true
			continue
		}
		ev, done := r.Advance(l.progressOf(r.Service), now)
		switch {
		case done:
			out.events = append(out.events, fmt.Sprintf("finish rollout of %s", r.Service))
			l.log().Info("rollout finished", "service", r.Service)
			out.ended[r.Service] = true
			continue
		case r.Paused != nil && ev != "":
			out.events = append(out.events, fmt.Sprintf("pause rollout of %s", r.Service))
			l.log().Warn("rollout paused", "service", r.Service, "wave", r.Paused.Wave, "member", r.Paused.Member, "gate", r.Paused.Gate, "message", r.Paused.Message)
		case ev != "":
			out.events = append(out.events, fmt.Sprintf("roll out %s: %s", r.Service, ev))
			l.log().Info("rollout wave committed", "service", r.Service, "wave", r.Reached, "of", len(r.Waves), "members", strings.Join(r.Current().Members, ","))
		}
		out.state.Rollouts = append(out.state.Rollouts, r)
	}
	return out, nil
}

// startRollouts starts a rollout for every service whose change from
// the last commit to report has a kind spec.rollout stages, and which
// has none yet. It says whether it started one (the render is then made
// again with it). A first commit, and members new to the ClusterSet,
// stage nothing: there is no traffic yet to protect.
func (l *Loop) startRollouts(out *staged, rs *resolved, snaps []*snapshot.Snapshot, report *render.Report) (bool, error) {
	policy := l.Config.Spec.Rollout
	if len(policy.Waves) == 0 || rs.head.IsZero() {
		return false, nil
	}
	prev := map[string]*render.ServiceReport{}
	for i := range rs.prev.Report.Services {
		s := &rs.prev.Report.Services[i]
		prev[s.Namespace+"/"+s.Name] = s
	}
	var before []*snapshot.Snapshot
	started := false
	for i := range report.Services {
		next := &report.Services[i]
		id := next.Namespace + "/" + next.Name
		if out.state.Find(id) != nil || out.ended[id] {
			continue
		}
		if sameShape(prev[id], next) {
			continue // churn: the common case, and no kind a rollout stages
		}
		c := change.ServiceBetween(prev[id], next)
		c.Gained = known(c.Gained, rs.prev.Inputs)
		kinds := rollout.Staged(policy, c)
		if len(kinds) == 0 {
			continue
		}
		if before == nil {
			var err error
			if before, err = committedSnapshots(rs.prev); err != nil {
				return false, err
			}
		}
		waves, err := rollout.Waves(policy, l.Config.Spec.Members)
		if err != nil {
			return false, err
		}
		var importers []string
		if p := prev[id]; p != nil {
			importers = p.ImportedBy
		}
		r := rollout.Start(id, kinds, waves, rollout.ExportsOf(before, next.Namespace, next.Name), importers,
			rollout.Digest(rollout.ExportsOf(snaps, next.Namespace, next.Name)), l.now())
		out.state.Rollouts = append(out.state.Rollouts, r)
		w := r.Current()
		out.events = append(out.events, fmt.Sprintf("roll out %s: wave %d of %d (%s): %s", id, r.Reached, len(r.Waves), w.Name, strings.Join(w.Members, ", ")))
		l.log().Info("rollout started", "service", id, "kinds", fmt.Sprint(kinds), "waves", len(r.Waves), "first", strings.Join(w.Members, ","))
		started = true
	}
	return started, nil
}

// known are the members of gained the last commit had a snapshot of.
func known(gained []string, inputs map[string][]byte) []string {
	var out []string
	for _, m := range gained {
		if _, ok := inputs[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// committedSnapshots parses the last commit's inputs/: the world before
// the change a rollout starts with.
func committedSnapshots(c *layout.Committed) ([]*snapshot.Snapshot, error) {
	var out []*snapshot.Snapshot
	for m, b := range c.Inputs {
		s, err := snapshot.Parse(m, layout.InputFile(m), b)
		if err != nil {
			return nil, fmt.Errorf("rollout: the last commit's snapshot of %s: %w", m, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// copyState is a deep copy of s, which the committed state shares.
func copyState(s *rollout.State) (*rollout.State, error) {
	b, err := rollout.Format(s)
	if err != nil {
		return nil, err
	}
	return rollout.Parse(b)
}

func (l *Loop) forgetProgress(service string) {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	delete(l.progress, service)
}

func (l *Loop) progressOf(service string) *rollout.Progress {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	return l.progress[service]
}

// rolloutPlan is the part of a proposal's body that says how its change
// rolls out once merged: the reviewer approves the whole plan at once.
func rolloutPlan(st, branch *rollout.State) string {
	var b strings.Builder
	b.WriteString("\n### Staged rollout (spec.rollout)\n\nMerging this approves every wave: the first lands with the merge, each next one once the last one's gates (ServiceImport with its IPs, derived Service applied, nothing refused) have held for its soak. `mcs-gitops rollout resume|abort` acts on a paused one.\n\n")
	for _, r := range st.Rollouts {
		if branch.Find(r.Service) != nil {
			continue
		}
		kinds := make([]string, len(r.Kinds))
		for i, k := range r.Kinds {
			kinds[i] = string(k)
		}
		fmt.Fprintf(&b, "- `%s` (%s):\n", r.Service, strings.Join(kinds, ", "))
		for i, w := range r.Waves {
			soak := ""
			if w.Soak != "" {
				soak = ", soak " + w.Soak
			}
			fmt.Fprintf(&b, "  %d. %s: %s%s\n", i+1, w.Name, orNone(w.Members), soak)
		}
	}
	return b.String()
}

func orNone(members []string) string {
	if len(members) == 0 {
		return "(nobody)"
	}
	return strings.Join(members, ", ")
}

// sameShape says that nothing a rollout stages can differ between p and
// n: the same importers, type, merged import and exports' conditions.
// Endpoint churn leaves all of these alone, so a cycle of churn does not
// work out each service's change.
func sameShape(p, n *render.ServiceReport) bool {
	return p != nil && p.Type == n.Type && slices.Equal(p.ImportedBy, n.ImportedBy) &&
		reflect.DeepEqual(p.NotServed, n.NotServed) && reflect.DeepEqual(p.Import, n.Import) && reflect.DeepEqual(p.Exports, n.Exports)
}
