// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// globalTrafficPoliciesGVR is read and watched on every member; unlike the
// MCS resources it is optional.
var globalTrafficPoliciesGVR = v1alpha1.SchemeGroupVersion.WithResource(v1alpha1.GlobalTrafficPolicyResource)

// readPolicies lists the member's GlobalTrafficPolicies in all namespaces.
// A member without the CRD has no policies: traffic policies are opt-in,
// and a member that never installed them must still export and import.
func (m *Member) readPolicies(ctx context.Context, namespaces []string) ([]v1alpha1.GlobalTrafficPolicy, error) {
	items, err := m.listIn(ctx, globalTrafficPoliciesGVR, namespaces)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing GlobalTrafficPolicies: %w", err)
	}
	var out []v1alpha1.GlobalTrafficPolicy
	err = m.loadThroughParse(items, namespaces != nil, v1alpha1.APIVersion, v1alpha1.GlobalTrafficPolicyKind, func(s *snapshot.Snapshot) {
		out = append(out, s.GlobalTrafficPolicies...)
	}, nil)
	return out, err
}
