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
// Namespaces are created only when missing.
func (a *Applier) checkCollisions(ctx context.Context, desired []desiredObject, res *Result) ([]desiredObject, error) {
	const (
		apply = iota + 1
		skip
		collide
	)
	verdict := make([]int, len(desired))
	errs := forEach(ctx, len(desired), func(ctx context.Context, i int) error {
		d := desired[i]
		existing := &metav1.PartialObjectMetadata{}
		existing.SetGroupVersionKind(d.obj.GroupVersionKind())
		err := a.Client.Get(ctx, client.ObjectKeyFromObject(d.obj), existing)
		switch {
		case apierrors.IsNotFound(err):
			verdict[i] = apply
		case err != nil:
			return fmt.Errorf("reading %s: %w", describe(d.obj), err)
		case keyOf(d.obj).GroupKind == namespaceGK:
			verdict[i] = skip
		case a.owns(existing.GetLabels()) && managedBy(existing, FieldManager):
			// Labels alone can be copied from a rendered object; only what
			// mcs-gitops wrote is its to overwrite.
			verdict[i] = apply
		default:
			verdict[i] = collide
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]desiredObject, 0, len(desired))
	for i, d := range desired {
		switch verdict[i] {
		case apply:
			out = append(out, d)
		case skip:
			res.Skipped = append(res.Skipped, describe(d.obj))
		case collide:
			res.Collisions = append(res.Collisions, describe(d.obj))
			res.Refused = append(res.Refused, Refusal{Object: describe(d.obj), Service: serviceOf(d.obj),
				Message: "an object mcs-gitops did not write (no owner labels, or labels copied) already has this name; it was left alone"})
		}
	}
	return out, nil
}
