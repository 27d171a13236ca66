package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// prune deletes the objects this applier owns that are not in the desired
// set, in every namespace, for every allow-listed kind but Namespace. An
// object is owned when all three owner labels match and its managed fields
// show that mcs-gitops wrote it: labels alone can be copied, and a user who
// copies them from a rendered object must not lose theirs. Nothing without
// the owner labels is ever listed, so nothing else is ever deleted. A kind
// whose API the member does not serve (Gateway API routes before they are
// installed) has nothing to prune.
func (a *Applier) prune(ctx context.Context, desired []desiredObject, res *Result) error {
	keep := map[objKey]bool{}
	for _, d := range desired {
		keep[keyOf(d.obj)] = true
	}
	var errs []error
	var deleted []string
	for _, gk := range prunable() {
		mapping, err := a.Client.RESTMapper().RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("prune: resolving %s: %w", gk, err))
			continue
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(gk.Kind + "List"))
		if err := a.Client.List(ctx, list, client.MatchingLabels(a.ownerLabels())); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			errs = append(errs, fmt.Errorf("prune: listing %s: %w", gk, err))
			continue
		}
		for i := range list.Items {
			item := &list.Items[i]
			k := objKey{GroupKind: gk, Namespace: item.Namespace, Name: item.Name}
			if keep[k] || !a.owns(item.Labels) || item.DeletionTimestamp != nil {
				continue
			}
			id := gk.Kind + "/" + item.Namespace + "/" + item.Name
			if !managedBy(item, FieldManager) {
				a.log().Warn("not pruning an object with our owner labels that mcs-gitops did not write (labels copied?)", "object", id)
				res.Skipped = append(res.Skipped, id)
				continue
			}
			item.SetGroupVersionKind(mapping.GroupVersionKind)
			// The UID precondition makes sure the object deleted is the
			// one listed, not one recreated under the same name since.
			err := a.Client.Delete(ctx, item,
				client.Preconditions{UID: &item.UID},
				client.PropagationPolicy(metav1.DeletePropagationBackground))
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("prune: deleting %s: %w", id, err))
				continue
			}
			deleted = append(deleted, id)
		}
	}
	slices.Sort(deleted)
	res.Deleted = append(res.Deleted, deleted...)
	return errors.Join(errs...)
}
