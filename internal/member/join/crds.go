// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/schemas/crds"
)

// wantedCRDs are the CRDs a member needs: MCS and GlobalTrafficPolicy
// always, the Gateway API ones only in gateway mode (where a Gateway
// implementation usually brought them already).
func wantedCRDs(gateway bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := crds.MCS()
	if err != nil {
		return nil, err
	}
	gtp, err := crds.GlobalTrafficPolicy()
	if err != nil {
		return nil, err
	}
	out = append(out, gtp)
	if gateway {
		gw, err := crds.GatewayAPI()
		if err != nil {
			return nil, err
		}
		out = append(out, gw...)
	}
	return out, nil
}

// installCRD creates a missing CRD and keeps one join installed before at
// this build's version. A CRD someone else installed is left as it is
// when it serves every version this build does, and is an error naming
// the missing versions otherwise: replacing another owner's CRD could
// drop a version its users' objects are stored in.
func (r *reporter) installCRD(ctx context.Context, c client.Client, want *apiextensionsv1.CustomResourceDefinition, timeout time.Duration) error {
	have := &apiextensionsv1.CustomResourceDefinition{}
	err := c.Get(ctx, client.ObjectKey{Name: want.Name}, have)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: read CustomResourceDefinition %s: %w", r.where, want.Name, err)
	}
	switch {
	case apierrors.IsNotFound(err):
	case have.DeletionTimestamp != nil:
		// An apply now would land on the object the apiserver is about to
		// remove: join would say installed, and the kind vanish after.
		if r.dryRun {
			r.say("CustomResourceDefinition "+want.Name, "being deleted: join waits for it to go, then creates it")
			return nil
		}
		if err := r.waitCRDGone(ctx, c, have, timeout); err != nil {
			return err
		}
	case !slices.ContainsFunc(have.GetManagedFields(), func(f metav1.ManagedFieldsEntry) bool { return f.Manager == FieldManager }):
		if missing := missingVersions(have, want); len(missing) > 0 {
			return fmt.Errorf("%s: CustomResourceDefinition %s, installed by someone else, does not serve %s, which mcs-gitops needs: upgrade it to sigs.k8s.io/mcs-api or Gateway API at least at the version of `mcs-gitops version`, then join again",
				r.where, want.Name, strings.Join(missing, ", "))
		}
		r.say("CustomResourceDefinition "+want.Name, "kept")
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s: %w", want.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return r.apply(ctx, c, u)
}

// waitCRDGone waits up to timeout for a CRD being deleted to be gone.
// The apiserver deletes its objects first, which takes from a moment to
// about a minute; an object's own finalizer can hold it for ever.
func (r *reporter) waitCRDGone(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition, timeout time.Duration) error {
	r.say("CustomResourceDefinition "+crd.Name, "being deleted: waiting for it to go")
	// The read takes the caller's context, not the poll's: near the
	// poll's deadline the client's rate limiter would refuse to wait and
	// fail the join with its own error instead of this one.
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err == nil {
		return nil
	}
	if !wait.Interrupted(err) {
		return fmt.Errorf("%s: wait for CustomResourceDefinition %s to be deleted: %w", r.where, crd.Name, err)
	}
	why := ""
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Terminating && c.Message != "" {
			why = " (" + c.Message + ")"
		}
	}
	return fmt.Errorf("%s: CustomResourceDefinition %s is being deleted and was still there after %s%s: finalizers on its objects hold it (kubectl get %s -A); join again once it is gone",
		r.where, crd.Name, timeout, why, crd.Name)
}

// missingVersions are the versions want serves and have does not.
func missingVersions(have, want *apiextensionsv1.CustomResourceDefinition) []string {
	var missing []string
	for _, w := range want.Spec.Versions {
		if !w.Served {
			continue
		}
		if !slices.ContainsFunc(have.Spec.Versions, func(h apiextensionsv1.CustomResourceDefinitionVersion) bool {
			return h.Name == w.Name && h.Served
		}) {
			missing = append(missing, w.Name)
		}
	}
	return missing
}
