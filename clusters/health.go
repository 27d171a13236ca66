package clusters

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// Health is one member's reachability as committed in status/members.yaml.
// Every field is a function of the member's state and the times involved,
// never of an error text, so an unchanged outage gives no new commit.
type Health struct {
	Member    string `json:"member"`
	Reachable bool   `json:"reachable"`
	// Reason is why the last read failed (a Reason* constant).
	Reason string `json:"reason,omitempty"`
	// UnreachableSince is when reads started failing, to the second, UTC.
	UnreachableSince *metav1.Time `json:"unreachableSince,omitempty"`
	// ExportsDropped: the member has been unreachable for longer than
	// staleAfter and its exports are no longer imported elsewhere.
	ExportsDropped bool `json:"exportsDropped,omitempty"`
	// Message explains to a person what the loop does about the member.
	Message string `json:"message,omitempty"`
}

// ResolveSnapshots decides, from one round of Collect results, which
// snapshot of each member the renderer gets, and each member's Health.
//
// A member that was read gives its fresh snapshot. A member that was not
// keeps its last known snapshot (lastKnown, normally the committed
// inputs/<member>.yaml), so a failed read never deletes its imports
// elsewhere; once it has been unreachable for staleAfter (> 0), its
// ServiceExports are left out instead and Health says so. A failed member
// without a last known snapshot contributes nothing. UnreachableSince comes
// from prev (the committed status/members.yaml) while the member stays
// down, so the clock is not reset by every cycle.
//
// It is pure: the same arguments give the same answer. The returned
// snapshots keep the order of results; lastKnown is not modified.
func ResolveSnapshots(results []Result, lastKnown map[string]*snapshot.Snapshot, prev map[string]Health,
	now time.Time, staleAfter time.Duration) ([]*snapshot.Snapshot, []Health) {
	snaps := make([]*snapshot.Snapshot, 0, len(results))
	health := make([]Health, 0, len(results))
	for _, r := range results {
		if r.Err == nil && r.Snapshot != nil {
			snaps = append(snaps, r.Snapshot)
			health = append(health, Health{Member: r.Member, Reachable: true})
			continue
		}
		reason := r.Reason
		if reason == "" {
			reason = ReasonUnreachable
		}
		since := now.UTC().Truncate(time.Second)
		if p, ok := prev[r.Member]; ok && !p.Reachable && p.UnreachableSince != nil {
			since = p.UnreachableSince.UTC().Truncate(time.Second)
		}
		h := Health{Member: r.Member, Reason: reason, UnreachableSince: &metav1.Time{Time: since}}
		stamp := since.Format(time.RFC3339)
		last := lastKnown[r.Member]
		switch {
		case last == nil:
			h.Message = fmt.Sprintf("unreachable since %s and no snapshot of it was ever committed: it contributes no exports", stamp)
		case staleAfter > 0 && now.Sub(since) >= staleAfter:
			h.ExportsDropped = true
			h.Message = fmt.Sprintf("unreachable since %s, longer than staleAfter %s: its exports are no longer imported", stamp, staleAfter)
			c := *last
			c.Member = r.Member
			c.ServiceExports = nil
			snaps = append(snaps, &c)
		default:
			h.Message = fmt.Sprintf("unreachable since %s: keeping its last known exports", stamp)
			if staleAfter > 0 {
				h.Message += fmt.Sprintf(" until %s (staleAfter %s)", since.Add(staleAfter).Format(time.RFC3339), staleAfter)
			}
			c := *last
			c.Member = r.Member
			snaps = append(snaps, &c)
		}
		health = append(health, h)
	}
	return snaps, health
}
