// SPDX-License-Identifier: Apache-2.0

package join

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/member/corefile"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

const kubeadmCorefile = `.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
    reload
}
`

// setup starts a management cluster with the Role of deploy/base and a
// member whose ServiceExport CRD is missing and whose CoreDNS is
// configured by kubeadm's ConfigMap.
func setup(t *testing.T) (mgmt, member *envtest.Cluster) {
	cs := envtest.StartWithout(t, 2, "serviceexports.multicluster.x-k8s.io")
	mgmt, member = cs[0], cs[1]
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, mgmt.Client, "mcs-gitops"))
	require.NoError(t, mgmt.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mcs-gitops", Name: ManagementRole},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"git-credentials"}, Verbs: []string{"get", "watch"}}},
	}))
	require.NoError(t, member.Client.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"}, Data: map[string]string{"Corefile": kubeadmCorefile},
	}))
	return mgmt, member
}

func options(mgmt, member *envtest.Cluster, out *bytes.Buffer) Options {
	return Options{Member: "east", Admin: member.Config, Management: mgmt.Client, DNS: &DefaultCoreDNS, Out: out}
}

func TestJoinDryRunChangesNothing(t *testing.T) {
	mgmt, member := setup(t)
	ctx := context.Background()
	var out bytes.Buffer
	o := options(mgmt, member, &out)
	o.DryRun = true
	res, err := Join(ctx, o)
	require.NoError(t, err, out.String())
	assert.Nil(t, res.Kubeconfig)
	t.Log(out.String())
	assert.Contains(t, out.String(), "member east: CustomResourceDefinition serviceexports.multicluster.x-k8s.io would be created")
	assert.Contains(t, out.String(), "member east: ClusterRole mcs-gitops-member would be created")
	assert.Contains(t, out.String(), "+       multicluster clusterset.local", "the Corefile diff is shown")
	assert.Contains(t, out.String(), "management cluster: Role mcs-gitops/mcs-gitops (Secret east-kubeconfig) would be granted")

	assert.True(t, apierrors.IsNotFound(member.Client.Get(ctx, client.ObjectKey{Name: "serviceexports.multicluster.x-k8s.io"}, &apiextensionsv1.CustomResourceDefinition{})))
	assert.True(t, apierrors.IsNotFound(member.Client.Get(ctx, client.ObjectKey{Name: "mcs-gitops-member"}, &rbacv1.ClusterRole{})))
	assert.True(t, apierrors.IsNotFound(member.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "mcs-gitops"}, &corev1.ServiceAccount{})))
	assert.True(t, apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "east-kubeconfig"}, &corev1.Secret{})))
	var cm corev1.ConfigMap
	require.NoError(t, member.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "coredns"}, &cm))
	assert.Equal(t, kubeadmCorefile, cm.Data["Corefile"])
	var role rbacv1.Role
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: ManagementRole}, &role))
	assert.Equal(t, []string{"git-credentials"}, role.Rules[0].ResourceNames)
}

func TestJoinRejoinLeave(t *testing.T) {
	mgmt, member := setup(t)
	ctx := context.Background()
	var out bytes.Buffer
	res, err := Join(ctx, options(mgmt, member, &out))
	require.NoError(t, err, out.String())
	t.Log(out.String())
	assert.Contains(t, out.String(), "CustomResourceDefinition serviceexports.multicluster.x-k8s.io created")
	assert.Contains(t, out.String(), "CustomResourceDefinition serviceimports.multicluster.x-k8s.io kept", "envtest's own is left alone")
	assert.NotContains(t, out.String(), "gateway.networking.k8s.io", "no Gateway API CRDs without gateway mode")
	assert.WithinDuration(t, time.Now().Add(DefaultTokenTTL), res.TokenExpires, time.Hour)

	// The Secret holds the member identity only.
	var sec corev1.Secret
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "east-kubeconfig"}, &sec))
	assert.Equal(t, res.Kubeconfig, sec.Data["value"])
	assert.NotContains(t, string(sec.Data["value"]), "client-key", "never the administrator's certificate")
	cfg, err := restConfig(sec.Data["value"])
	require.NoError(t, err)
	assert.True(t, authenticatesAs(ctx, cfg, MemberUser))
	joined, err := client.New(cfg, client.Options{Scheme: envtest.Scheme()})
	require.NoError(t, err)
	require.NoError(t, joined.List(ctx, &mcsv1alpha1.ServiceExportList{}), "the joined identity reads exports")
	assert.True(t, apierrors.IsForbidden(joined.List(ctx, &corev1.SecretList{})), "and nothing it does not need")
	var role rbacv1.Role
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: ManagementRole}, &role))
	assert.Equal(t, []string{"git-credentials", "east-kubeconfig"}, role.Rules[0].ResourceNames)
	var cm corev1.ConfigMap
	require.NoError(t, member.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "coredns"}, &cm))
	assert.True(t, corefile.Serves(cm.Data["Corefile"], "clusterset.local"))
	require.NoError(t, member.Client.Get(ctx, client.ObjectKey{Name: "mcs-gitops-coredns"}, &rbacv1.ClusterRoleBinding{}))

	// Again: nothing changes, the token is kept.
	out.Reset()
	again, err := Join(ctx, options(mgmt, member, &out))
	require.NoError(t, err, out.String())
	assert.True(t, again.TokenKept)
	assert.Equal(t, res.Kubeconfig, again.Kubeconfig)
	for _, changed := range []string{" created", " configured", " granted"} {
		assert.NotContains(t, out.String(), changed, "a second join changes nothing:\n%s", out.String())
	}

	// Rotation issues a new token.
	o := options(mgmt, member, &out)
	o.Rotate = true
	rotated, err := Join(ctx, o)
	require.NoError(t, err)
	assert.False(t, rotated.TokenKept)
	assert.NotEqual(t, res.Kubeconfig, rotated.Kubeconfig)

	// A user's export must survive leave, and so must the CRDs.
	require.NoError(t, envtest.EnsureNamespaces(ctx, member.Client, "shop"))
	require.NoError(t, member.Client.Create(ctx, &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"}}))
	out.Reset()
	require.NoError(t, Leave(ctx, options(mgmt, member, &out)), out.String())
	t.Log(out.String())
	assert.True(t, apierrors.IsNotFound(member.Client.Get(ctx, client.ObjectKey{Name: "mcs-gitops-member"}, &rbacv1.ClusterRole{})))
	assert.True(t, apierrors.IsNotFound(member.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "mcs-gitops"}, &corev1.ServiceAccount{})))
	assert.True(t, apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "east-kubeconfig"}, &corev1.Secret{})))
	require.NoError(t, member.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &mcsv1alpha1.ServiceExport{}))
	require.NoError(t, member.Client.Get(ctx, client.ObjectKey{Name: "serviceexports.multicluster.x-k8s.io"}, &apiextensionsv1.CustomResourceDefinition{}))
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: ManagementRole}, &role))
	assert.Equal(t, []string{"git-credentials"}, role.Rules[0].ResourceNames)
	rotatedCfg, err := restConfig(rotated.Kubeconfig)
	require.NoError(t, err)
	// The apiserver caches a good token for 10 s, so the revocation can
	// take that long to show, and longer on a loaded machine.
	assert.Eventually(t, func() bool { return !authenticatesAs(ctx, rotatedCfg, MemberUser) }, 30*time.Second, 100*time.Millisecond,
		"the ServiceAccount's deletion revokes its tokens")
}

// A Secret of the member's name that join did not write (Cluster API's
// administrator kubeconfig) is never overwritten.
func TestJoinRefusesSomeoneElsesSecret(t *testing.T) {
	mgmt, member := setup(t)
	ctx := context.Background()
	require.NoError(t, mgmt.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mcs-gitops", Name: "east-kubeconfig"}, Data: map[string][]byte{"value": []byte("admin")},
	}))
	var out bytes.Buffer
	_, err := Join(ctx, options(mgmt, member, &out))
	require.ErrorContains(t, err, "Secret mcs-gitops/east-kubeconfig exists and join did not create it")
	var sec corev1.Secret
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "east-kubeconfig"}, &sec))
	assert.Equal(t, "admin", string(sec.Data["value"]))
}

// A CRD being deleted cannot be applied back: the apply lands on the
// object the finalizer is about to remove. Join waits for it to go and
// installs it again; one its objects' finalizers hold is an error that
// names it, never a join reported done whose kind then vanishes.
func TestJoinWaitsForATerminatingCRD(t *testing.T) {
	mgmt, member := setup(t)
	ctx := context.Background()
	var out bytes.Buffer
	_, err := Join(ctx, options(mgmt, member, &out))
	require.NoError(t, err, out.String())

	require.NoError(t, envtest.EnsureNamespaces(ctx, member.Client, "shop"))
	held := &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", Finalizers: []string{"example.com/hold"}}}
	require.NoError(t, member.Client.Create(ctx, held))
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "serviceexports.multicluster.x-k8s.io"}}
	require.NoError(t, member.Client.Delete(ctx, crd))

	out.Reset()
	o := options(mgmt, member, &out)
	o.CRDDeleteTimeout = time.Second
	_, err = Join(ctx, o)
	require.Error(t, err, "join must not report a CRD installed while it is being deleted:\n%s", out.String())
	assert.Contains(t, err.Error(), "CustomResourceDefinition serviceexports.multicluster.x-k8s.io is being deleted")
	assert.Contains(t, err.Error(), "kubectl get serviceexports.multicluster.x-k8s.io -A")

	// Let it go: join waits out the rest of the deletion and installs it.
	require.NoError(t, member.Client.Get(ctx, client.ObjectKeyFromObject(held), held))
	held.Finalizers = nil
	require.NoError(t, member.Client.Update(ctx, held))
	out.Reset()
	_, err = Join(ctx, options(mgmt, member, &out))
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), "CustomResourceDefinition serviceexports.multicluster.x-k8s.io created")
	require.NoError(t, member.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd))
	assert.Nil(t, crd.DeletionTimestamp)
	require.Eventually(t, func() bool {
		return member.Client.Create(ctx, &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"}}) == nil
	}, 30*time.Second, 100*time.Millisecond, "the kind is served again")
}
