// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DenyService makes the member refuse to create or update the Service
// ns/name, as a tenant's admission policy or quota would, with message as
// the apiserver's answer: a ValidatingAdmissionPolicy and its binding. It
// returns once the apiserver enforces it (a policy takes a moment to be
// loaded), and a function that removes it again.
func DenyService(ctx context.Context, c client.Client, ns, name, message string) (remove func(context.Context) error, err error) {
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-" + name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}},
				},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf("!(object.metadata.namespace == %q && object.metadata.name == %q)", ns, name),
				Message:    message,
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-" + name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := c.Create(ctx, o); err != nil {
			return nil, fmt.Errorf("creating %s: %w", o.GetName(), err)
		}
	}
	probe := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	// denied waits until a dry-run create of the Service is refused with
	// message (want) or no longer is (!want).
	denied := func(ctx context.Context, want bool) error {
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
			if (err != nil && strings.Contains(err.Error(), message)) == want {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("admission policy deny-%s: enforced is not %v after 30s (last answer: %v)", name, want, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	remove = func(ctx context.Context) error {
		if err := c.Delete(ctx, binding); err != nil {
			return err
		}
		if err := c.Delete(ctx, policy); err != nil {
			return err
		}
		return denied(ctx, false)
	}
	return remove, denied(ctx, true)
}
