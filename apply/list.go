// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listPage bounds one list response, so a member with many objects is read
// in pieces rather than one large answer.
const listPage = 500

// listPaged lists into l a page at a time and calls page after each one,
// while l holds that page's items (the next page replaces them: page
// copies what it keeps).
func (a *Applier) listPaged(ctx context.Context, l client.ObjectList, page func(), opts ...client.ListOption) error {
	for {
		if err := a.Client.List(ctx, l, append(opts, client.Limit(listPage), client.Continue(l.GetContinue()))...); err != nil {
			return err
		}
		page()
		if l.GetContinue() == "" {
			return nil
		}
	}
}
