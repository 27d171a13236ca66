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

// createMissing applies, in parallel, objects the member was found not to
// hold a moment ago (checkCollisions), each with the one server-side apply
// PATCH ssa would end with, under the same field manager and force: for an
// object that does not exist ssa's read and dry run can only say
// "create", so a new export costs one request an object, not three, and
// a first sync's objects do not queue behind each other. What the
// apiserver refuses is a refusal, as in applyEach; one that runs out of
// time makes the error. It returns the keys of the refused objects, and
// records each created object as the member answered (its cluster IPs, a
// Service's) in answers, by key, for the status write after it.
//
// An object someone creates between the check and the PATCH is taken
// over, as it would be by ssa between its read and its apply.
func (a *Applier) createMissing(ctx context.Context, objs []desiredObject, answers map[objKey]*unstructured.Unstructured, res *Result) (map[objKey]bool, error) {
	errs := make([]error, len(objs))
	created := make([]*unstructured.Unstructured, len(objs))
	forEach(ctx, len(objs), func(ctx context.Context, i int) error {
		// The PATCH writes the server's answer into what it is given; the
		// prepared object is kept for the next apply.
		created[i] = objs[i].obj.DeepCopy()
		errs[i] = a.Client.Patch(ctx, created[i], client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership)
		return nil
	})
	refused := map[objKey]bool{}
	timedOut := 0
	for i, d := range objs {
		switch err := errs[i]; {
		case err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil):
			timedOut++
		case err != nil:
			refused[d.key] = true
			res.Refused = append(res.Refused, Refusal{Object: describe(d.obj), Service: serviceOf(d.obj),
				Message: fmt.Sprintf("%s apply failed: %v", describe(d.obj), err)})
		default:
			res.Created = append(res.Created, describe(d.obj))
			if answers != nil {
				answers[d.key] = created[i]
			}
		}
	}
	if timedOut > 0 {
		return refused, fmt.Errorf("creating %d of %d object(s) did not finish in time: %w", timedOut, len(objs), context.DeadlineExceeded)
	}
	return refused, nil
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
