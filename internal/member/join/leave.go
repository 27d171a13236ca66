// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/deploy"
)

// Leave undoes Join: in the member it deletes the admission policy, the
// member role and the ServiceAccount (which revokes every token issued for
// it); in the management cluster the kubeconfig Secret join wrote and its
// name in the Role. It leaves the CRDs (deleting one deletes every user's
// ServiceExport), what the loop rendered into the member (remove the
// member from clusterset.yaml first; `kubectl delete` by label clears the
// rest, see docs/running.md) and the CoreDNS configuration.
func Leave(ctx context.Context, o Options) error {
	if err := o.defaults(); err != nil {
		return err
	}
	c, _, err := adminClients(o.Admin)
	if err != nil {
		return fmt.Errorf("member %q: %w", o.Member, err)
	}
	r := &reporter{out: o.Out, where: "member " + o.Member, dryRun: o.DryRun}
	objs, err := deploy.Objects(slices.Concat(deploy.AdmissionPolicy, deploy.CreateNamespaces, deploy.MemberRole)...)
	if err != nil {
		return err
	}
	// The identity loses its rights and its tokens first, the policy that
	// fences it goes last, so it is never unfenced while it can still write.
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int { return leaveRank(a) - leaveRank(b) })
	for _, obj := range objs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(obj.GroupVersionKind())
		u.SetNamespace(obj.GetNamespace())
		u.SetName(obj.GetName())
		if err := r.remove(ctx, c, u, describe(obj)); err != nil {
			return err
		}
	}
	if o.Management == nil {
		return nil
	}
	m := &reporter{out: o.Out, where: "management cluster", dryRun: o.DryRun}
	if err := m.grantSecret(ctx, o.Management, o.Namespace, o.Member, false); err != nil {
		return err
	}
	var s corev1.Secret
	key := client.ObjectKey{Namespace: o.Namespace, Name: SecretName(o.Member)}
	what := fmt.Sprintf("Secret %s/%s", key.Namespace, key.Name)
	if err := o.Management.Get(ctx, key, &s); err == nil && s.Labels[LabelManagedBy] != FieldManager {
		m.say(what, "kept (join did not create it)")
		return nil
	}
	return m.remove(ctx, o.Management, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}, what)
}

func leaveRank(u *unstructured.Unstructured) int {
	switch u.GetKind() {
	case "ClusterRoleBinding", "RoleBinding":
		return 0
	case "ServiceAccount":
		return 1
	case "ValidatingAdmissionPolicyBinding":
		return 3
	case "ValidatingAdmissionPolicy":
		return 4
	}
	return 2
}
