// SPDX-License-Identifier: Apache-2.0

package change

import (
	"fmt"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// MemberState is a member's place in the ClusterSet in one commit: absent
// (""), Reachable, Unreachable (its last known exports kept) or Stale
// (unreachable past staleAfter: its exports dropped).
type MemberState string

const (
	Reachable   MemberState = "Reachable"
	Unreachable MemberState = "Unreachable"
	Stale       MemberState = "Stale"
)

// Member is one member whose state changes: joining (Old absent),
// leaving (New absent), going unreachable or stale, or coming back.
type Member struct {
	Name string      `json:"name"`
	Old  MemberState `json:"old,omitempty"`
	New  MemberState `json:"new,omitempty"`
	// Reason and Since say why and since when the member is unreachable
	// (clusters' Reason* constants; RFC 3339, UTC), on whichever side it
	// is.
	Reason string `json:"reason,omitempty"`
	Since  string `json:"unreachableSince,omitempty"`
}

// String says the change in words, the member first: what a commit
// message, a summary and a --fail-on finding say.
func (m Member) String() string {
	why := ""
	if m.Reason != "" {
		why = " (" + m.Reason + ")"
	}
	switch {
	case m.Old == "":
		return m.Name + " joins the ClusterSet"
	case m.New == "":
		return m.Name + " leaves the ClusterSet"
	case m.New == Stale:
		since := m.Since
		if since == "" {
			since = "unknown"
		}
		return fmt.Sprintf("%s unreachable since %s%s for longer than staleAfter; its exports are dropped", m.Name, since, why)
	case m.New == Unreachable && m.Old == Reachable:
		return fmt.Sprintf("%s unreachable%s; keeping its last known exports", m.Name, why)
	case m.New == Unreachable:
		return fmt.Sprintf("%s still unreachable%s; its exports are imported again", m.Name, why)
	case m.Old == Stale:
		return m.Name + " reachable again; its exports are imported again"
	default:
		return m.Name + " reachable again"
	}
}

// Short says the change in a few words, for a commit subject.
func (m Member) Short() string {
	switch {
	case m.Old == "":
		return m.Name + " joins the ClusterSet"
	case m.New == "":
		return m.Name + " leaves the ClusterSet"
	case m.New == Stale:
		return m.Name + " stale, its exports dropped"
	case m.New == Unreachable && m.Old == Stale:
		return m.Name + " exports restored, still unreachable"
	case m.New == Unreachable:
		return m.Name + " unreachable"
	case m.Old == Stale:
		return m.Name + " reachable again, exports restored"
	default:
		return m.Name + " reachable again"
	}
}

// Dropped reports whether the change drops the member's exports (it goes
// stale), Restored whether it brings them back.
func (m Member) Dropped() bool  { return m.New == Stale && m.Old != "" }
func (m Member) Restored() bool { return m.Old == Stale && m.New != "" }

// MovesExports reports whether the change adds or takes away the
// member's exports (joining, leaving, going stale, coming back from it),
// rather than only its reachability.
func (m Member) MovesExports() bool {
	return m.Old == "" || m.New == "" || m.Dropped() || m.Restored()
}

// MemberStates are the states of names, the members of one commit, from
// its status/members.yaml (health): a member without a record is
// Reachable.
func MemberStates(names []string, health map[string]snapshot.Health) map[string]MemberState {
	out := make(map[string]MemberState, len(names))
	for _, n := range names {
		h, ok := health[n]
		switch {
		case !ok || h.Reachable:
			out[n] = Reachable
		case h.ExportsDropped:
			out[n] = Stale
		default:
			out[n] = Unreachable
		}
	}
	return out
}

// HealthBetween is MembersBetween of two commits, each given as its
// members' names and its status/members.yaml.
func HealthBetween(prevNames []string, prev map[string]snapshot.Health, nextNames []string, next map[string]snapshot.Health) []Member {
	return MembersBetween(MemberStates(prevNames, prev), MemberStates(nextNames, next), next, prev)
}

// MembersBetween lists the members whose state differs between prev and
// next, sorted by name; health (next's, then prev's) gives the reason
// and time of an unreachable one.
func MembersBetween(prev, next map[string]MemberState, health ...map[string]snapshot.Health) []Member {
	var out []Member
	for _, n := range unionKeys(prev, next) {
		if prev[n] == next[n] {
			continue
		}
		m := Member{Name: n, Old: prev[n], New: next[n]}
		for _, h := range health {
			if r, ok := h[n]; ok && !r.Reachable && m.Reason == "" {
				m.Reason = r.Reason
				if r.UnreachableSince != nil {
					m.Since = r.UnreachableSince.UTC().Format("2006-01-02T15:04:05Z")
				}
			}
		}
		out = append(out, m)
	}
	return out
}
