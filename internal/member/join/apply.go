// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager owns, in server-side apply, every field join writes. It is
// not the loop's manager, so the loop's prune never sees these objects as
// its own.
const FieldManager = "mcs-gitops-join"

// Managed labels what join creates in the management cluster, so leave
// deletes only that.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelMember    = "mcs-gitops.io/member"
)

// reporter prints one line per object join looks at: what it did, or in a
// dry run what it would do.
type reporter struct {
	out    io.Writer
	where  string // "member cluster-3" or "management cluster"
	dryRun bool
}

func (r *reporter) say(what, outcome string) {
	if r.dryRun && outcome != "unchanged" && !strings.HasPrefix(outcome, "kept") && outcome != "absent" && !strings.HasPrefix(outcome, "being deleted") {
		outcome = "would be " + outcome
	}
	fmt.Fprintf(r.out, "%s: %s %s\n", r.where, what, outcome)
}

// apply server-side applies obj (a dry run when r.dryRun) and reports
// whether it was created, configured or unchanged.
func (r *reporter) apply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	what := describe(obj)
	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), before)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: read %s: %w", r.where, what, err)
	}
	after := obj.DeepCopy()
	opts := &client.ApplyOptions{FieldManager: FieldManager, Force: ptr.To(true)}
	if r.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(after), opts); err != nil {
		return fmt.Errorf("%s: apply %s: %w", r.where, what, err)
	}
	switch {
	case !exists:
		r.say(what, "created")
	case equality.Semantic.DeepEqual(content(before), content(after)):
		r.say(what, "unchanged")
	default:
		r.say(what, "configured")
	}
	return nil
}

// remove deletes obj when it exists and reports it.
func (r *reporter) remove(ctx context.Context, c client.Client, obj client.Object, what string) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		r.say(what, "absent")
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: read %s: %w", r.where, what, err)
	}
	var opts []client.DeleteOption
	if r.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Delete(ctx, obj, opts...); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: delete %s: %w", r.where, what, err)
	}
	r.say(what, "deleted")
	return nil
}

// content is an object without what the server changes on every write.
func content(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	delete(c.Object, "status")
	return c.Object
}

func describe(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), ns, u.GetName())
	}
	return u.GetKind() + " " + u.GetName()
}
