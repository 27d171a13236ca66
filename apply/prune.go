// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// prune deletes the objects this applier owns that are not in the desired
// set, in every namespace, for every allow-listed kind but Namespace. An
// object is owned when all three owner labels match and its managed fields
// show that mcs-gitops wrote it: labels alone can be copied, and a user who
// copies them from a rendered object must not lose theirs. Nothing without
// the owner labels is ever listed, so nothing else is ever deleted. A kind
// whose API the member does not serve (Gateway API routes before they are
// installed) has nothing to prune. The member's Gateway is never deleted:
// the listeners mcs-gitops merged into it are released instead
// (releaseGateway). With a Memory, only the objects that left the desired
// set since the last prune are looked at, each read by name when they are
// few (a FailOver moving a slice deletes one), until the memory is
// forgotten (pruneGone).
func (a *Applier) prune(ctx context.Context, desired []desiredObject, res *Result) error {
	keep := map[objKey]bool{}
	for _, d := range desired {
		keep[d.key] = true
	}
	gone, all := a.Memory.pruneGone(keep)
	if !all && len(gone) == 0 {
		// What was applied is in keep, so the member holds nothing of
		// ours outside it: a later set that drops an object of this one
		// must look at it.
		a.Memory.pruneDone(keep)
		return nil
	}
	var stale []staleObject
	var skipped []string
	var err error
	if all || len(gone) >= listAtLeast {
		stale, skipped, err = a.stale(ctx, keep)
	} else {
		stale, skipped, err = a.staleOf(ctx, gone)
	}
	res.Skipped = append(res.Skipped, skipped...)
	errs := []error{err}
	var deleted []string
	for _, s := range stale {
		// The UID precondition makes sure the object deleted is the one
		// listed, not one recreated under the same name since.
		err := a.Client.Delete(ctx, s.item,
			client.Preconditions{UID: &s.item.UID},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("prune: deleting %s: %w", s.id, err))
			continue
		}
		deleted = append(deleted, s.id)
	}
	slices.Sort(deleted)
	res.Deleted = append(res.Deleted, deleted...)
	errs = append(errs, a.releaseGateway(ctx, keep, res))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	a.Memory.pruneDone(keep)
	return nil
}

// staleObject is an object prune would delete.
type staleObject struct {
	item *metav1.PartialObjectMetadata
	id   string // Kind/namespace/name
}

// stale lists the objects this applier owns that keep does not hold, and
// those it skips because they carry the owner labels but mcs-gitops did
// not write them. It changes nothing.
func (a *Applier) stale(ctx context.Context, keep map[objKey]bool) (out []staleObject, skipped []string, _ error) {
	var errs []error
	for _, gk := range contract.Prunable() {
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
			if keep[objKey{GroupKind: gk, Namespace: item.Namespace, Name: item.Name}] {
				continue
			}
			out, skipped = a.sortStale(item, mapping.GroupVersionKind, out, skipped)
		}
	}
	slices.SortFunc(out, func(x, y staleObject) int { return strings.Compare(x.id, y.id) })
	return out, skipped, errors.Join(errs...)
}

// staleOf is stale for the given objects only, each read by name: those
// of them this applier owns, and those it skips.
func (a *Applier) staleOf(ctx context.Context, keys []objKey) (out []staleObject, skipped []string, _ error) {
	prunable := contract.Prunable()
	var errs []error
	for _, k := range keys {
		if !slices.Contains(prunable, k.GroupKind) {
			continue
		}
		mapping, err := a.Client.RESTMapper().RESTMapping(k.GroupKind)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("prune: resolving %s: %w", k.GroupKind, err))
			continue
		}
		item := &metav1.PartialObjectMetadata{}
		item.SetGroupVersionKind(mapping.GroupVersionKind)
		err = a.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, item)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("prune: reading %s %s/%s: %w", k.Kind, k.Namespace, k.Name, err))
			continue
		}
		out, skipped = a.sortStale(item, mapping.GroupVersionKind, out, skipped)
	}
	slices.SortFunc(out, func(x, y staleObject) int { return strings.Compare(x.id, y.id) })
	return out, skipped, errors.Join(errs...)
}

// sortStale adds item (of gvk, not desired) to stale when this applier
// owns it, to skipped when it carries the owner labels but mcs-gitops did
// not write it, and to neither when it is not ours or already going.
func (a *Applier) sortStale(item *metav1.PartialObjectMetadata, gvk schema.GroupVersionKind, stale []staleObject, skipped []string) ([]staleObject, []string) {
	if !a.owns(item.Labels) || item.DeletionTimestamp != nil {
		return stale, skipped
	}
	id := gvk.Kind + "/" + item.Namespace + "/" + item.Name
	if !managedBy(item, FieldManager) {
		a.log().Warn("not pruning an object with our owner labels that mcs-gitops did not write (labels copied?)", "object", id)
		return stale, append(skipped, id)
	}
	item.SetGroupVersionKind(gvk)
	return append(stale, staleObject{item: item, id: id}), skipped
}

// WouldDelete lists, without changing anything, what applying a commit
// without this member's directory would delete: everything mcs-gitops
// applied there, and the listeners it merged into the member's Gateway.
// apply --ref prints it when it refuses such a commit.
func (a *Applier) WouldDelete(ctx context.Context) ([]string, error) {
	stale, _, err := a.stale(ctx, nil)
	ids := make([]string, len(stale))
	for i, s := range stale {
		ids[i] = s.id
	}
	g, gerr := a.heldGateway(ctx)
	if g != nil {
		ids = append(ids, "the listeners of Gateway/"+g.Namespace+"/"+g.Name)
	}
	return ids, errors.Join(err, gerr)
}
