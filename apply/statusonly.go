// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"time"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// statusOnly is applyObjects for a member whose directory another
// applier applies. Every rendered object counts as applied for the
// spec.ips lookup (the derived Service is read live, and an absent one
// gives no ips); nothing is remembered, so each cycle reads the member
// again, which is what notices the other applier's progress.
func (a *Applier) statusOnly(ctx context.Context, desired []desiredObject, report *render.Report, res *Result, t time.Time) (*Result, *applied) {
	keys := make(map[objKey]bool, len(desired))
	for _, d := range desired {
		keys[d.key] = true
	}
	if err := a.writeImports(ctx, desired, keys, nil, report, res); err != nil {
		res.Err = err
		a.logResult(res)
		return res, nil
	}
	timed(&res.Took.Status, t)
	return res, &applied{desired: desired, keys: keys}
}
