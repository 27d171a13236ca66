// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/clusters"
)

// ManagementRole is the Role of deploy/base whose Secret rule join extends
// with each joined member's Secret name.
const ManagementRole = "mcs-gitops"

// SecretName is the Cluster API convention join follows for a member's
// kubeconfig Secret.
func SecretName(member string) string { return member + "-kubeconfig" }

// readSecretKubeconfig returns the kubeconfig in the member's Secret, nil
// when there is none.
func readSecretKubeconfig(ctx context.Context, mgmt client.Client, ns, member string) ([]byte, error) {
	var s corev1.Secret
	err := mgmt.Get(ctx, client.ObjectKey{Namespace: ns, Name: SecretName(member)}, &s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("management cluster: read Secret %s/%s: %w", ns, SecretName(member), err)
	}
	return s.Data[clusters.DefaultSecretKey], nil
}

// writeSecret applies the member's kubeconfig Secret. A Secret of that
// name join did not create is refused rather than overwritten: it may be
// Cluster API's administrator kubeconfig.
func (r *reporter) writeSecret(ctx context.Context, mgmt client.Client, ns, member string, kubeconfig []byte) error {
	return r.writeOwnedSecret(ctx, mgmt, ns, SecretName(member), member, map[string][]byte{clusters.DefaultSecretKey: kubeconfig},
		"it may be an administrator kubeconfig: delete or rename it, or point the member's secretRef elsewhere")
}

// writeOwnedSecret applies Secret ns/name, labelled as join's and as
// member's, with data. One of that name join did not create is refused,
// with advice, rather than overwritten.
func (r *reporter) writeOwnedSecret(ctx context.Context, mgmt client.Client, ns, name, member string, data map[string][]byte, advice string) error {
	var have corev1.Secret
	err := mgmt.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &have)
	if err == nil && have.Labels[LabelManagedBy] != FieldManager {
		return fmt.Errorf("management cluster: Secret %s/%s exists and join did not create it (no label %s=%s); %s",
			ns, name, LabelManagedBy, FieldManager, advice)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("management cluster: read Secret %s/%s: %w", ns, name, err)
	}
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{LabelManagedBy: FieldManager, LabelMember: member}},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return err
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	return r.apply(ctx, mgmt, &unstructured.Unstructured{Object: m})
}

// grantSecret adds (or with add false removes) the member's Secret to the
// resourceNames of the management Role's Secret rule, so mcs-gitops may
// read exactly the Secrets of its members. A Role without such a rule (or
// absent) is reported and left alone: it is not join's to create.
func (r *reporter) grantSecret(ctx context.Context, mgmt client.Client, ns, member string, add bool) error {
	return r.grantSecretNamed(ctx, mgmt, ns, SecretName(member), add)
}

// grantSecretNamed is grantSecret for the Secret called secret.
func (r *reporter) grantSecretNamed(ctx context.Context, mgmt client.Client, ns, secret string, add bool) error {
	what := fmt.Sprintf("Role %s/%s (Secret %s)", ns, ManagementRole, secret)
	var role rbacv1.Role
	err := mgmt.Get(ctx, client.ObjectKey{Namespace: ns, Name: ManagementRole}, &role)
	if apierrors.IsNotFound(err) {
		fmt.Fprintf(r.out, "%s: Role %s/%s not found: mcs-gitops must be allowed to get and watch Secret %s (deploy/base/rbac.yaml)\n",
			r.where, ns, ManagementRole, secret)
		return nil
	}
	if err != nil {
		return fmt.Errorf("management cluster: read Role %s/%s: %w", ns, ManagementRole, err)
	}
	changed, found := false, false
	for i, rule := range role.Rules {
		if !slices.Contains(rule.Resources, "secrets") || len(rule.ResourceNames) == 0 {
			continue
		}
		found = true
		has := slices.Contains(rule.ResourceNames, secret)
		switch {
		case add && !has:
			role.Rules[i].ResourceNames = append(rule.ResourceNames, secret)
			changed = true
		case !add && has:
			role.Rules[i].ResourceNames = slices.DeleteFunc(rule.ResourceNames, func(n string) bool { return n == secret })
			changed = true
		}
	}
	if !found {
		r.say(what, "kept (its Secret rule is not limited by resourceNames)")
		return nil
	}
	if !changed {
		r.say(what, "unchanged")
		return nil
	}
	var opts []client.UpdateOption
	if r.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := mgmt.Update(ctx, &role, opts...); err != nil {
		return fmt.Errorf("management cluster: update Role %s/%s: %w", ns, ManagementRole, err)
	}
	if add {
		r.say(what, "granted")
	} else {
		r.say(what, "revoked")
	}
	return nil
}
