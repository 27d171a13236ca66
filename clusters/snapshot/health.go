// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Health is one member's reachability as committed in status/members.yaml.
// Every field is a function of the member's state and the times involved,
// never of an error text, so an unchanged outage gives no new commit.
type Health struct {
	Member    string `json:"member"`
	Reachable bool   `json:"reachable"`
	// Reason is why the last read failed (clusters' Reason* constants).
	Reason string `json:"reason,omitempty"`
	// UnreachableSince is when reads started failing, to the second, UTC.
	UnreachableSince *metav1.Time `json:"unreachableSince,omitempty"`
	// ExportsDropped: the member has been unreachable for longer than
	// staleAfter and its exports are no longer imported elsewhere.
	ExportsDropped bool `json:"exportsDropped,omitempty"`
	// Held is set while the withdrawal guard holds the member: what it
	// would withdraw, and the digest that releases it.
	Held *HeldWithdrawal `json:"held,omitempty"`
	// Message explains to a person what the loop does about the member.
	Message string `json:"message,omitempty"`
}

// DropStale drops the exports of each member whose health says they are
// dropped (unreachable past staleAfter): what the loop rendered from
// (Resolve), for a render of a commit's inputs/, which keep the member's
// last snapshot whole.
func DropStale(snaps []*Snapshot, health map[string]Health) {
	for _, s := range snaps {
		if h, ok := health[s.Member]; ok && h.ExportsDropped {
			s.ServiceExports = nil
		}
	}
}
