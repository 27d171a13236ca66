// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// policy decodes a GlobalTrafficPolicy. Its status is dropped: it is what
// mcs-gitops itself wrote back after the previous render, and keeping it
// would make every write-back change the member's snapshot. Only names are
// checked here; a policy whose spec is invalid is kept so that the renderer
// can report it (Accepted=False) on the policy itself.
func (p *parser) policy(line int, js []byte) error {
	if err := decodeInto(p, line, v1alpha1.GlobalTrafficPolicyKind, js, &p.s.GlobalTrafficPolicies, true); err != nil {
		return err
	}
	last := &p.s.GlobalTrafficPolicies[len(p.s.GlobalTrafficPolicies)-1]
	last.Status = v1alpha1.GlobalTrafficPolicyStatus{}
	return nil
}

// formattedPolicy is a GlobalTrafficPolicy as inputs/<member>.yaml holds it:
// the type's status field is a struct, which would print as "status: {}".
type formattedPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              v1alpha1.GlobalTrafficPolicySpec `json:"spec"`
}

// normalizePolicy keeps what identifies the policy and what it asks for.
// The deletionTimestamp is kept as for ServiceExports: a policy being
// deleted is on its way out, and the renderer may treat it so.
func normalizePolicy(gtp v1alpha1.GlobalTrafficPolicy) formattedPolicy {
	return formattedPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.GlobalTrafficPolicyKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: gtp.Name, Namespace: gtp.Namespace, DeletionTimestamp: gtp.DeletionTimestamp,
		},
		Spec: gtp.Spec,
	}
}
