// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// createNamespaces creates the rendered Namespaces the collision check
// found missing, with a plain create rather than a server-side apply: a
// rendered Namespace is only ever created, so the member need grant
// create on namespaces and never patch, which would let mcs-gitops relabel
// any Namespace. It returns the rest of toApply and the keys of the
// Namespaces the member refused.
func (a *Applier) createNamespaces(ctx context.Context, toApply []desiredObject, res *Result) ([]desiredObject, map[objKey]bool) {
	rest := toApply[:0:0]
	refused := map[objKey]bool{}
	for _, d := range toApply {
		if d.key.GroupKind != contract.NamespaceKind {
			rest = append(rest, d)
			continue
		}
		id := describe(d.obj)
		err := a.Client.Create(ctx, d.obj.DeepCopy(), client.FieldOwner(FieldManager))
		switch {
		case err == nil:
			res.Created = append(res.Created, id)
		case apierrors.IsAlreadyExists(err):
			res.Skipped = append(res.Skipped, id)
		default:
			refused[d.key] = true
			res.Refused = append(res.Refused, Refusal{Object: id, Message: err.Error()})
		}
	}
	return rest, refused
}
