// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyKnown applies, in parallel, objects whose outcome is known before
// asking, each with the one server-side apply PATCH ssa would end with,
// under the same field manager and force: one the member was found not
// to hold a moment ago (checkCollisions) can only be created, and one the
// memory knows it holds other bytes of ours must be configured, so ssa's
// read and dry run would only say so. A new export then costs one
// request an object instead of three, a churning slice one PATCH instead
// of three, and the PATCHes do not queue behind each other (ssa sends its
// applies one at a time). An object someone creates between the check and
// the PATCH is taken over, as it would be by ssa between its read and its
// apply.
//
// What the member does not take this way is returned for ssa, which
// recreates an object whose change an immutable field forbids and words
// a refusal as for every other object; running out of time is the error.
// Each created object is recorded as the member answered (a Service's
// cluster IPs) in created, by key, for the status write after it.
func (a *Applier) applyKnown(ctx context.Context, objs []desiredObject, created map[objKey]*unstructured.Unstructured, res *Result) (failed []desiredObject, _ error) {
	errs := make([]error, len(objs))
	answers := make([]*unstructured.Unstructured, len(objs))
	forEach(ctx, len(objs), func(ctx context.Context, i int) error {
		// The PATCH writes the member's answer into what it is given; the
		// prepared object is kept for the next apply.
		answers[i] = objs[i].obj.DeepCopy()
		errs[i] = a.Client.Patch(ctx, answers[i], client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership)
		return nil
	})
	timedOut := 0
	for i, d := range objs {
		_, missing := created[d.key]
		switch err := errs[i]; {
		case err != nil && outOfTime(ctx, err):
			timedOut++
		case err != nil:
			failed = append(failed, d)
		case missing:
			res.Created = append(res.Created, describe(d.obj))
			created[d.key] = answers[i]
		default:
			res.Configured = append(res.Configured, describe(d.obj))
		}
	}
	if timedOut > 0 {
		return nil, fmt.Errorf("applying %d of %d object(s) did not finish in time: %w", timedOut, len(objs), context.DeadlineExceeded)
	}
	return failed, nil
}

// live is the object of key as the member holds it: as it answered the
// create of this apply (created), or read now.
func (a *Applier) live(ctx context.Context, gvk schema.GroupVersionKind, key objKey, created map[objKey]*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if u := created[key]; u != nil {
		return u, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, a.Client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, u)
}

// outOfTime says whether err ended a request because ctx ran out, not
// because the member refused it.
func outOfTime(ctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil
}
