// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// objKey identifies an object independently of the API version it is
// served under.
type objKey struct {
	schema.GroupKind
	Namespace, Name string
}

func keyOf(u *unstructured.Unstructured) objKey {
	return objKey{GroupKind: u.GroupVersionKind().GroupKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// checkCollisions returns the objects that may be applied. An existing
// object without this applier's owner labels, or with them but never
// written by field manager mcs-gitops (labels copied from a rendered
// object), belongs to someone else (a user, another tool, another
// ClusterSet or member): it is reported as a collision and skipped, never
// overwritten. An existing Namespace is simply left alone: rendered
// Namespaces are created only when missing. The member's Gateway is the
// opposite: the user's by design, it only takes our listeners, so it is
// applied when it exists and refused when it does not (gateway.go). The
// objects to apply that the member did not hold are also returned apart
// (missing), by key, for applyKnown to create and record the member's
// answer under.
func (a *Applier) checkCollisions(ctx context.Context, desired []desiredObject, res *Result) (_ []desiredObject, missing map[objKey]*unstructured.Unstructured, _ error) {
	const (
		apply  = iota + 1
		create // apply, to a member that does not hold it
		skip
		collide
		absent
	)
	verdict := make([]int, len(desired))
	decide := func(i int, existing *metav1.PartialObjectMetadata) {
		d := desired[i]
		switch {
		case d.key.GroupKind == contract.GatewayKind && existing == nil:
			verdict[i] = absent
		case d.key.GroupKind == contract.GatewayKind:
			verdict[i] = apply
		case existing == nil:
			verdict[i] = create
		case d.key.GroupKind == contract.NamespaceKind:
			verdict[i] = skip
		case a.owns(existing.GetLabels()) && managedBy(existing, FieldManager):
			// Labels alone can be copied from a rendered object; only what
			// mcs-gitops wrote is its to overwrite.
			verdict[i] = apply
		default:
			verdict[i] = collide
		}
	}
	// Many objects of one kind in one namespace (a first sync, a rejoin)
	// are looked up with one metadata list; a few with a read each.
	groups := map[listKey][]int{}
	for i, d := range desired {
		k := listKey{gvk: d.obj.GroupVersionKind(), namespace: d.obj.GetNamespace()}
		groups[k] = append(groups[k], i)
	}
	var listed []listKey
	var single []int
	for k, idx := range groups {
		if len(idx) >= listAtLeast && k.namespace != "" {
			listed = append(listed, k)
		} else {
			single = append(single, idx...)
		}
	}
	errs := forEach(ctx, len(listed), func(ctx context.Context, j int) error {
		k := listed[j]
		live, err := a.listMetadata(ctx, k)
		if err != nil {
			return fmt.Errorf("listing %s in namespace %s: %w", k.gvk.Kind, k.namespace, err)
		}
		for _, i := range groups[k] {
			decide(i, live[desired[i].obj.GetName()])
		}
		return nil
	})
	errs = append(errs, forEach(ctx, len(single), func(ctx context.Context, j int) error {
		i := single[j]
		d := desired[i]
		existing := &metav1.PartialObjectMetadata{}
		existing.SetGroupVersionKind(d.obj.GroupVersionKind())
		err := a.Client.Get(ctx, client.ObjectKeyFromObject(d.obj), existing)
		switch {
		case apierrors.IsNotFound(err):
			decide(i, nil)
		case err != nil:
			return fmt.Errorf("reading %s: %w", describe(d.obj), err)
		default:
			decide(i, existing)
		}
		return nil
	})...)
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	out := make([]desiredObject, 0, len(desired))
	missing = map[objKey]*unstructured.Unstructured{}
	for i, d := range desired {
		switch verdict[i] {
		case apply:
			out = append(out, d)
		case create:
			out = append(out, d)
			missing[d.key] = nil
		case skip:
			res.Skipped = append(res.Skipped, describe(d.obj))
		case absent:
			res.Refused = append(res.Refused, Refusal{Object: describe(d.obj), Message: gatewayAbsent})
		case collide:
			res.Collisions = append(res.Collisions, describe(d.obj))
			res.Refused = append(res.Refused, Refusal{Object: describe(d.obj), Service: serviceOf(d.obj),
				Message: "an object mcs-gitops did not write (no owner labels, or labels copied) already has this name; it was left alone"})
		}
	}
	return out, missing, nil
}

// listAtLeast is the number of objects of one kind in one namespace from
// which a metadata list is cheaper than a read each. A variable so tests
// can take the list path with few objects.
var listAtLeast = 16

type listKey struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// listMetadata is the metadata of every object of k's kind in k's
// namespace, by name.
func (a *Applier) listMetadata(ctx context.Context, k listKey) (map[string]*metav1.PartialObjectMetadata, error) {
	out := map[string]*metav1.PartialObjectMetadata{}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	err := a.listPaged(ctx, l, func() {
		for _, o := range l.Items {
			out[o.Name] = &o
		}
	}, client.InNamespace(k.namespace))
	return out, err
}
