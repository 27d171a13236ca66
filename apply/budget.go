// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"time"
)

// Budget bounds one member's apply on its own, from the work it has:
// Base, plus PerObject for every object it sends (or status it writes).
// A member that cannot keep it is cut at its own deadline and reported as
// a timeout, not as objects it refused; the other members keep theirs.
// One deadline for a whole cycle coupled them: one member's slow writes
// used it up and failed the healthy members' status writes too, and a
// first sync of 1,000 services could not fit it at all. The zero Budget
// sets no deadline (the caller's context alone).
type Budget struct {
	Base, PerObject time.Duration
}

// context is ctx with the deadline for n objects.
func (b Budget) context(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	if b == (Budget{}) {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, b.For(n))
}

// For is the time n objects get.
func (b Budget) For(n int) time.Duration {
	return b.Base + time.Duration(n)*b.PerObject
}
