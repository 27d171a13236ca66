// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"fmt"
	"strings"
)

// announceHeld writes a Warning Event in the management cluster for each
// withdrawal the guard holds that was not announced yet (a new member
// held, or another digest), so that a person hears of it where they
// answer a refused branch, not only in the log and on status. Each cycle
// of the same hold logs it again; the Event is written once.
func (l *Loop) announceHeld(ctx context.Context, rs *resolved) {
	held := map[string]string{}
	for _, h := range rs.res.Health {
		if h.Held == nil {
			continue
		}
		held[h.Member] = h.Held.Digest
		if l.announced[h.Member] == h.Held.Digest {
			continue
		}
		scope := "counted against its own exports"
		if h.Held.ClusterSet {
			scope = "counted against the ClusterSet's exports, with the other members"
		}
		if h.Held.Wiped != "" {
			scope = "it looks wiped: " + h.Held.Wiped
		}
		if len(h.Held.Examples) > 0 {
			scope = strings.Join(h.Held.Examples, ", ") + "; " + scope
		}
		note := fmt.Sprintf("member %s would withdraw %d of %d exports at once (%s); held: nothing of it is withdrawn and its last committed snapshot stands in. If it is meant, add {member: %s, digest: %s} to spec.sync.withdrawalGuard.release",
			h.Member, h.Held.Withdrawn, h.Held.Exported, scope, h.Member, h.Held.Digest)
		l.managementEvent(ctx, "WithdrawalHeld", "Hold", note)
	}
	l.announced = held
}
