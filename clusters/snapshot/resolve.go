// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LastCommit is what Resolve falls back on: the committed
// snapshot files and health of the members.
type LastCommit struct {
	// Inputs are the committed snapshot files by member name.
	Inputs map[string][]byte
	Health map[string]Health
	// InputFile names a member's snapshot file in errors; nil gives
	// FileName.
	InputFile func(member string) string
}

func (c LastCommit) file(member string) string {
	if c.InputFile != nil {
		return c.InputFile(member)
	}
	return FileName(member)
}

// lastKnown parses member's committed snapshot; nil when none is committed.
func (c LastCommit) lastKnown(member string) (*Snapshot, error) {
	data, ok := c.Inputs[member]
	if !ok {
		return nil, nil
	}
	return Parse(member, c.file(member)+" (last commit)", data)
}

// Read is what reading one member gave, as Resolve needs it.
type Read struct {
	Member string
	// Snapshot is what was read; nil when the member could not be read.
	Snapshot *Snapshot
	// Reason says why the member could not be read (clusters' Reason*
	// constants); it is committed in the member's Health.
	Reason string
	// GatewayUnresolved: the member was read but its gateway host, a DNS
	// name, did not resolve, so Snapshot has no gateway addresses.
	GatewayUnresolved bool
}

// Resolution is what the renderer gets and what is committed for one round
// of reads.
type Resolution struct {
	// Snapshots the renderer gets, in the order of the reads; a member
	// that failed and has nothing committed has none.
	Snapshots []*Snapshot
	// Files are the snapshot files to commit, by member: a live member's
	// normalized, the others' as last committed.
	Files map[string][]byte
	// Health of every member, in the order of the reads.
	Health []Health
	// KeptGateway maps each live member whose gateway host did not resolve
	// (Read.GatewayUnresolved) to the last committed addresses it keeps, nil
	// when none were committed.
	KeptGateway map[string][]string
}

// Resolve decides, from one round of reads and the last commit, which snapshot of each member the renderer gets, what is
// committed as its snapshot file, and each member's Health. It is the one
// place where the last commit stands in for what could not be read.
//
// A member that was read gives its fresh snapshot, normalized
// (snapshot.Normalize) so the commit re-renders byte for byte from its own
// inputs. When its gateway host, a DNS name, did not resolve, it keeps the
// addresses of its last committed snapshot: a DNS hiccup must not cut every
// consumer off from its gateway. A member that was not read keeps its last
// committed snapshot, so a failed read never deletes its imports
// elsewhere; once it has been unreachable for staleAfter (> 0), its
// ServiceExports are left out instead and Health says so. A failed member
// with nothing committed contributes nothing. UnreachableSince comes from
// the committed health while the member stays down, so the clock is not
// reset by every cycle.
//
// It is pure: the same arguments give the same answer, and neither the
// reads nor last are modified; norm (nil: none) only saves normalizing a
// member's snapshot equal to the one it was last given. It fails only on a
// snapshot that does not format and load back, or a committed one that
// does not load.
func Resolve(reads []Read, last LastCommit, now time.Time, staleAfter time.Duration, norm *NormalizeCache) (*Resolution, error) {
	res := &Resolution{
		Snapshots: make([]*Snapshot, 0, len(reads)),
		Files:     map[string][]byte{},
		Health:    make([]Health, 0, len(reads)),
	}
	for _, r := range reads {
		if r.Snapshot != nil {
			live := r.Snapshot
			if r.GatewayUnresolved {
				var kept []string
				// A committed snapshot that does not load just has no
				// addresses to give.
				if s, err := last.lastKnown(r.Member); err == nil && s != nil {
					kept = s.GatewayAddresses
				}
				c := *live
				c.GatewayAddresses = kept
				live = &c
				if res.KeptGateway == nil {
					res.KeptGateway = map[string][]string{}
				}
				res.KeptGateway[r.Member] = kept
			}
			data, s, err := norm.Normalize(live, last.file(r.Member))
			if err != nil {
				return nil, fmt.Errorf("member %q: %w", r.Member, err)
			}
			res.Snapshots = append(res.Snapshots, s)
			res.Files[r.Member] = data
			res.Health = append(res.Health, Health{Member: r.Member, Reachable: true})
			continue
		}
		since := now.UTC().Truncate(time.Second)
		if p, ok := last.Health[r.Member]; ok && !p.Reachable && p.UnreachableSince != nil {
			since = p.UnreachableSince.UTC().Truncate(time.Second)
		}
		h := Health{Member: r.Member, Reason: r.Reason, UnreachableSince: &metav1.Time{Time: since}}
		stamp := since.Format(time.RFC3339)
		lastSnap, err := last.lastKnown(r.Member)
		if err != nil {
			return nil, err
		}
		if lastSnap != nil {
			res.Files[r.Member] = last.Inputs[r.Member]
		}
		switch {
		case lastSnap == nil:
			h.Message = fmt.Sprintf("unreachable since %s and no snapshot of it was ever committed: it contributes no exports", stamp)
		case staleAfter > 0 && now.Sub(since) >= staleAfter:
			h.ExportsDropped = true
			h.Message = fmt.Sprintf("unreachable since %s, longer than staleAfter %s: its exports are no longer imported", stamp, staleAfter)
			lastSnap.ServiceExports = nil
			res.Snapshots = append(res.Snapshots, lastSnap)
		default:
			h.Message = fmt.Sprintf("unreachable since %s: keeping its last known exports", stamp)
			if staleAfter > 0 {
				h.Message += fmt.Sprintf(" until %s (staleAfter %s)", since.Add(staleAfter).Format(time.RFC3339), staleAfter)
			}
			res.Snapshots = append(res.Snapshots, lastSnap)
		}
		res.Health = append(res.Health, h)
	}
	return res, nil
}
