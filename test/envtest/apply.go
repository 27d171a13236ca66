// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServerSideApply applies every object with field manager FieldManager, taking
// ownership of conflicting fields as the real applier does. With dryRun the
// apiserver runs the full admission and validation chain (dryRun=All) and
// persists nothing, which is how tests prove rendered output is valid.
//
// Namespaces go first so that objects in a namespace the same batch creates
// can be applied. Every object is tried; the error lists each failure by
// apiVersion, kind, namespace and name. The caller's slice and objects are left
// untouched.
func ServerSideApply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, dryRun bool) error {
	ordered := slices.Clone(objs)
	slices.SortStableFunc(ordered, func(a, b *unstructured.Unstructured) int {
		return rank(a) - rank(b)
	})
	opts := &client.ApplyOptions{FieldManager: FieldManager, Force: ptr.To(true)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var errs []error
	for _, obj := range ordered {
		if obj == nil {
			errs = append(errs, errors.New("server-side apply: nil object"))
			continue
		}
		if err := applyOne(ctx, c, obj, opts); err != nil {
			errs = append(errs, fmt.Errorf("server-side apply %s: %w", Describe(obj), err))
		}
	}
	return errors.Join(errs...)
}

func applyOne(ctx context.Context, c client.Client, obj *unstructured.Unstructured, opts *client.ApplyOptions) error {
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return errors.New("object has no apiVersion or kind")
	}
	// A JSON round trip rather than DeepCopy: the client writes the server's
	// answer back into the object it is given, and DeepCopy panics on the
	// non-JSON number types hand-built maps tend to contain.
	data, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding: %w", err)
	}
	cp := &unstructured.Unstructured{}
	if err := cp.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(cp), opts)
}

func rank(u *unstructured.Unstructured) int {
	if u != nil && u.GetAPIVersion() == "v1" && u.GetKind() == "Namespace" {
		return 0
	}
	return 1
}

// Describe names an object the way error messages in these tests do:
// "apiVersion Kind namespace/name", or "apiVersion Kind name" when cluster-scoped.
func Describe(u *unstructured.Unstructured) string {
	id := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		id = ns + "/" + id
	}
	return fmt.Sprintf("%s %s %s", u.GetAPIVersion(), u.GetKind(), id)
}

// EnsureNamespaces creates each named namespace that does not exist yet. It
// really creates them even when the caller later dry-runs, because a dry-run
// create of a namespaced object still needs its namespace to exist.
func EnsureNamespaces(ctx context.Context, c client.Client, names ...string) error {
	for _, name := range names {
		if name == "" {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %q: %w", name, err)
		}
	}
	return nil
}

// Namespaces returns the sorted, distinct namespaces the objects live in.
func Namespaces(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o == nil {
			continue
		}
		if ns := o.GetNamespace(); ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}
