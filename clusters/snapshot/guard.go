// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Guard is the withdrawal guard (spec.sync.withdrawalGuard): a member
// whose live read would withdraw at least MinExports of the exports the
// last commit rendered for it, and more than MaxSharePercent of them, is
// held; so is every member that withdraws anything when all of them
// together cross MaxClusterSetSharePercent. MinExports < 0 turns it off.
type Guard struct {
	MinExports, MaxSharePercent int
	// MaxClusterSetSharePercent holds every member that withdraws
	// anything when all of them together withdraw at least MinExports
	// and more than this share of the ClusterSet's exports; 0: no such
	// rule.
	MaxClusterSetSharePercent int
	// Released maps a member to the digest of a withdrawal a person let
	// through.
	Released map[string]string
}

// HeldWithdrawal is what Health records of a member the guard holds.
type HeldWithdrawal struct {
	// Withdrawn of Exported exports would have gone in one cycle.
	Withdrawn int `json:"withdrawn"`
	Exported  int `json:"exported"`
	// Digest names this withdrawal: release it with this digest.
	Digest string `json:"digest"`
	// First few of the withdrawn exports, namespace/name.
	Examples []string `json:"examples,omitempty"`
	// ClusterSet: held because the members together withdraw too much,
	// not this one alone.
	ClusterSet bool `json:"clusterSet,omitempty"`
	// Wiped says why the member looks wiped, when that is why it is held
	// (fewer exports than minExports, or too small a share).
	Wiped string `json:"wiped,omitempty"`
}

// maxExamples bounds the exports a held withdrawal names.
const maxExamples = 5

// HoldWithdrawals applies the guard to a Resolution: exported maps each
// member to the exports (namespace/name) the last commit rendered for
// it. A live member the guard holds gets its last committed snapshot
// instead of its read (nothing of it is withdrawn anywhere, and its
// committed file is kept, so the commit still renders to itself), and
// its Health says why and how to release it (Health.Held). It is pure,
// and changes res in place.
//
// Why hold rather than follow: a GitOps loop that follows a member
// emptied at once (a namespace deleted, a Helm upgrade gone wrong, an
// etcd restored with CRDs before workloads) withdraws its services from
// every other member in one commit, applied at once. Held, the services
// keep working on their last known endpoints until a person says the
// withdrawal is meant.
func HoldWithdrawals(res *Resolution, last LastCommit, exported map[string][]string, g Guard) error {
	if g.MinExports < 0 {
		return nil
	}
	// What each live member's read would withdraw.
	type withdrawal struct {
		i            int
		h            *Health
		before, gone []string
	}
	var ws []withdrawal
	total, totalGone := 0, 0
	for i, s := range res.Snapshots {
		h := healthOf(res, s.Member)
		if h == nil || !h.Reachable {
			continue // a stand-in already
		}
		before := exported[s.Member]
		live := map[string]bool{}
		for _, e := range s.ServiceExports {
			if e.DeletionTimestamp == nil { // a terminating export is withdrawn too
				live[e.Namespace+"/"+e.Name] = true
			}
		}
		var gone []string
		for _, k := range before {
			if !live[k] {
				gone = append(gone, k)
			}
		}
		slices.Sort(gone)
		total += len(before)
		totalGone += len(gone)
		if len(gone) > 0 {
			ws = append(ws, withdrawal{i: i, h: h, before: before, gone: gone})
		}
	}
	unusual := func(gone, of, share int) bool {
		return gone > 0 && gone >= g.MinExports && gone*100 > share*of
	}
	// Several members each under the line can still withdraw most of the
	// ClusterSet together (one Helm release deployed to every member).
	together := g.MaxClusterSetSharePercent > 0 && unusual(totalGone, total, g.MaxClusterSetSharePercent)

	for _, w := range ws {
		s := res.Snapshots[w.i]
		alone := unusual(len(w.gone), len(w.before), g.MaxSharePercent)
		digest := withdrawalDigest(s.Member, w.gone)
		if g.Released[s.Member] == digest {
			continue
		}
		committed, err := last.lastKnown(s.Member)
		if err != nil {
			return err
		}
		if committed == nil {
			continue // nothing to hold on to
		}
		wiped := ""
		if !alone && !together {
			if wiped = looksWiped(s, committed, w.before, w.gone); wiped == "" {
				continue
			}
		}
		res.Snapshots[w.i] = committed
		res.Files[s.Member] = last.Inputs[s.Member]
		hw := &HeldWithdrawal{Withdrawn: len(w.gone), Exported: len(w.before), Digest: digest, Examples: w.gone[:min(len(w.gone), maxExamples)]}
		why := fmt.Sprintf("this read would withdraw %d of its %d exports at once (%s%s)",
			len(w.gone), len(w.before), strings.Join(hw.Examples, ", "), more(len(w.gone)-len(hw.Examples)))
		switch {
		case wiped != "":
			hw.Wiped = wiped
			why += "; it looks wiped: " + wiped
		case !alone:
			hw.ClusterSet = true
			why += fmt.Sprintf(", and the members together %d of the ClusterSet's %d", totalGone, total)
		}
		w.h.Held = hw
		w.h.Message = fmt.Sprintf("held: %s; nothing is withdrawn and its last committed snapshot stands in until a person releases it with spec.sync.withdrawalGuard.release: [{member: %s, digest: %s}]",
			why, s.Member, digest)
	}
	return nil
}

// looksWiped says why a member whose read withdraws gone of its exports
// before looks wiped rather than changed, "" when it does not: every
// export of it went at once (at least two; the share guard alone lets a
// member with fewer than minExports through), or the namespaces its
// withdrawn exports were in are there again under new UIDs, recreated (an
// etcd restored, or a cluster rebuilt, with CRDs and namespaces before the
// workloads). A UID only counts when the commit recorded one.
func looksWiped(s, committed *Snapshot, before, gone []string) string {
	if len(before) >= 2 && len(gone) == len(before) {
		return fmt.Sprintf("every one of its %d exports went at once", len(before))
	}
	was := map[string]types.UID{}
	for _, ns := range committed.Namespaces {
		was[ns.Name] = ns.UID
	}
	affected := map[string]bool{}
	for _, k := range gone {
		ns, _, _ := strings.Cut(k, "/")
		affected[ns] = true
	}
	var recreated []string
	for _, ns := range s.Namespaces {
		if old := was[ns.Name]; affected[ns.Name] && old != "" && ns.UID != "" && ns.UID != old {
			recreated = append(recreated, ns.Name)
		}
	}
	if len(recreated) == 0 {
		return ""
	}
	return fmt.Sprintf("namespace(s) %s were recreated (new UIDs)", strings.Join(recreated, ", "))
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

func healthOf(res *Resolution, member string) *Health {
	for i := range res.Health {
		if res.Health[i].Member == member {
			return &res.Health[i]
		}
	}
	return nil
}

// withdrawalDigest names a withdrawal by the member and what it withdraws,
// not by the rest of the member's state, so endpoint churn does not make a
// release stale while a changed withdrawal does.
func withdrawalDigest(member string, gone []string) string {
	h := sha256.New()
	h.Write([]byte(member))
	for _, k := range gone {
		h.Write([]byte{0})
		h.Write([]byte(k))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
