// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// List lists the ClusterProfiles src selects in the management cluster.
// Errors say what to fix: the CRD missing, the namespace or the right to
// list them.
func List(ctx context.Context, c client.Reader, src *v1alpha1.InventorySource) ([]*Profile, error) {
	where := fmt.Sprintf("inventory: list ClusterProfiles in namespace %q of the management cluster", src.Namespace)
	if c == nil {
		return nil, fmt.Errorf("%s: no management cluster: pass --management-kubeconfig or run in-cluster", where)
	}
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(GroupVersionKind.GroupVersion().WithKind(Kind + "List"))
	opts := []client.ListOption{client.InNamespace(src.Namespace)}
	if len(src.MatchLabels) > 0 {
		opts = append(opts, client.MatchingLabels(src.MatchLabels))
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		switch {
		case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%s: the ClusterProfile CRD (%s) is not installed there: install it, or the cluster manager that brings it", where, Resource+"."+Group)
		case apierrors.IsForbidden(err):
			return nil, fmt.Errorf("%s: forbidden: grant get, list and watch on clusterprofiles.%s in that namespace (docs/inventory.md): %w", where, Group, err)
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	out := make([]*Profile, 0, len(list.Items))
	for i := range list.Items {
		p, err := FromUnstructured(&list.Items[i])
		if err != nil {
			return nil, fmt.Errorf("inventory: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Get reads one ClusterProfile, for a hand-written member whose
// credentials come through it (kubeconfig.clusterProfile).
func Get(ctx context.Context, c client.Reader, ref v1alpha1.ClusterProfileRef) (*Profile, error) {
	where := fmt.Sprintf("ClusterProfile %s/%s", ref.Namespace, ref.Name)
	if c == nil {
		return nil, fmt.Errorf("%s: no management cluster to read it from", where)
	}
	var u unstructured.Unstructured
	u.SetGroupVersionKind(GroupVersionKind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s does not exist", where)
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return FromUnstructured(&u)
}
