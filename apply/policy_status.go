// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

var policyGVK = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.GlobalTrafficPolicyKind)

// writePolicyStatus sets what the renderer decided for one of this
// member's GlobalTrafficPolicies on its status: the conditions (each keeping
// its lastTransitionTime while its status is unchanged, observedGeneration
// the policy's generation now), status.clusters and status.weights; live
// is the policy as listed.
func (a *Applier) writePolicyStatus(ctx context.Context, live *unstructured.Unstructured, p render.PolicyReport, note func(string)) error {
	id := v1alpha1.GlobalTrafficPolicyKind + "/" + live.GetNamespace() + "/" + live.GetName()
	var have v1alpha1.GlobalTrafficPolicyStatus
	if raw, ok := live.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &have); err != nil {
			return fmt.Errorf("status of %s: reading it: %w", id, err)
		}
	}
	want := v1alpha1.GlobalTrafficPolicyStatus{
		Conditions: apiConditions(p.Conditions, have.Conditions, live.GetGeneration(), a.transitionTime()),
		Clusters:   p.Clusters,
		Weights:    p.Weights,
	}
	if policyStatusEqual(want, have) {
		return nil
	}
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&want)
	if err != nil {
		return fmt.Errorf("status of %s: %w", id, err)
	}
	u := skeleton(policyGVK, live.GetNamespace(), live.GetName())
	// Fields left out of the apply are released by this field manager, so
	// clusters or weights no longer rendered disappear from the status.
	u.Object["status"] = st
	if err := a.applyStatus(ctx, u); err != nil {
		if apierrors.IsNotFound(err) {
			a.log().Debug("policy deleted since it was listed; no status to write", "object", id)
			return nil
		}
		return fmt.Errorf("status of %s: %w", id, err)
	}
	a.policyEvents(live, have.Conditions, want.Conditions, have.Clusters, want.Clusters)
	note(id + " status")
	return nil
}

// policyStatusEqual reports whether the cluster already holds want. Unlike
// an export's, a policy's status is mcs-gitops's alone, so a condition it
// no longer renders counts as a difference too.
func policyStatusEqual(want, have v1alpha1.GlobalTrafficPolicyStatus) bool {
	return len(want.Conditions) == len(have.Conditions) && conditionsPresent(want.Conditions, have.Conditions) &&
		slices.Equal(want.Clusters, have.Clusters) && maps.Equal(want.Weights, have.Weights)
}
