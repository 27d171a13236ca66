package clusters

import (
	"context"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// globalTrafficPoliciesGVR is read and watched on every member; unlike the
// MCS resources it is optional.
var globalTrafficPoliciesGVR = v1alpha1.SchemeGroupVersion.WithResource(v1alpha1.GlobalTrafficPolicyResource)

// readPolicies lists the member's GlobalTrafficPolicies in all namespaces.
// A member without the CRD has no policies: traffic policies are opt-in,
// and a member that never installed them must still export and import.
func (m *Member) readPolicies(ctx context.Context) ([]v1alpha1.GlobalTrafficPolicy, error) {
	list, err := m.dynamic.Resource(globalTrafficPoliciesGVR).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing GlobalTrafficPolicies: %w", err)
	}
	var out []v1alpha1.GlobalTrafficPolicy
	for _, u := range list.Items {
		u.SetManagedFields(nil)
		u.SetAPIVersion(v1alpha1.APIVersion)
		u.SetKind(v1alpha1.GlobalTrafficPolicyKind)
		js, err := u.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("GlobalTrafficPolicy %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		// Through Parse, as for ServiceExports: the same checks a
		// committed snapshot gets, and the status dropped the same way.
		// The CRD already refuses what Parse would, so a policy left out
		// here means a CRD older than this code; it is logged.
		one, err := snapshot.Parse(m.Name, v1alpha1.GlobalTrafficPolicyKind, js)
		if err != nil {
			slog.Warn("ignoring a GlobalTrafficPolicy that cannot be loaded", "member", m.Name,
				"globalTrafficPolicy", u.GetNamespace()+"/"+u.GetName(), "error", err)
			continue
		}
		out = append(out, one.GlobalTrafficPolicies...)
	}
	return out, nil
}
