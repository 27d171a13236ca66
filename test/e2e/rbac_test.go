package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// memberUser is the identity deploy/member-rbac binds: the ServiceAccount
// kube-system/mcs-gitops, as the apiserver sees its token.
const memberUser = "system:serviceaccount:kube-system:mcs-gitops"

// grantMemberRole applies the kustomizations under deploy/ given (relative
// to deploy/member-rbac) to c as its administrator.
func grantMemberRole(t *testing.T, c *envtest.Cluster, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join("..", "..", "deploy", "member-rbac", d))
		require.NoError(t, err)
		var objs []*unstructured.Unstructured
		for _, r := range res.Resources() {
			m, err := r.Map()
			require.NoError(t, err)
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
		require.NoError(t, envtest.ServerSideApply(context.Background(), c.Client, objs, false))
	}
}

// TestSyncRunsWithOnlyTheMemberRole: every cycle step (read, apply, prune,
// status, a created Namespace) works with exactly the rights
// deploy/member-rbac grants, so the role is known to be enough; the rights
// it leaves out are known to be unused.
func TestSyncRunsWithOnlyTheMemberRole(t *testing.T) {
	w := newWorld(t, 2, "  render:\n    createMissingNamespaces: true\n")
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	for _, m := range w.members {
		grantMemberRole(t, m, ".", "create-namespaces")
		require.NoError(t, m.WriteKubeconfigAs(filepath.Join(w.dir, m.Name+".kubeconfig"), memberUser,
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"))
	}
	w.loop = w.newLoop(filepath.Join(t.TempDir(), "clone"))

	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	export(t, c1, "pay", "ledger", 5432, "10.1.0.11") // cluster-2 has no namespace pay
	out := w.sync()
	assert.Empty(t, out.FailedMembers())

	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"))
	assert.True(t, exists(c2.Client, &corev1.Service{}, "shop", render.DerivedServiceName("shop", "cart")))
	assert.True(t, exists(c2.Client, &corev1.Namespace{}, "", "pay"), "created with the create-namespaces role")
	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "pay", "ledger"))
	assertExportConditions(t, c1, "shop", "cart", map[string]string{"Valid": "True", "Conflict": "False"})
	si := &mcsv1alpha1.ServiceImport{}
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, si))
	assert.NotEmpty(t, si.Spec.IPs, "spec.ips written")
	assert.NotEmpty(t, si.Status.Clusters, "status written")

	unexport(t, c1, "shop", "cart")
	out = w.sync()
	assert.Empty(t, out.FailedMembers())
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "pruned")
}
