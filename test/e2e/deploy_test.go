package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestDeployManifests builds every kustomization under deploy/ and has a
// real apiserver validate the result (server-side dry run), and checks the
// example ClusterSet config loads.
func TestDeployManifests(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, c.Client, "mcs-gitops"))
	root, err := filepath.Abs("../../deploy")
	require.NoError(t, err)
	want := map[string][]string{
		"controller":                    {"Deployment/mcs-gitops/mcs-gitops", "Role/mcs-gitops/mcs-gitops", "ConfigMap"},
		"cronjob":                       {"CronJob/mcs-gitops/mcs-gitops-sync", "ServiceAccount/mcs-gitops/mcs-gitops"},
		"member-rbac":                   {"ClusterRole//mcs-gitops-member", "ClusterRoleBinding//mcs-gitops-member"},
		"member-rbac/admission-policy":  {"ValidatingAdmissionPolicy//mcs-gitops-member", "ValidatingAdmissionPolicyBinding//mcs-gitops-member"},
		"member-rbac/create-namespaces": {"ClusterRole//mcs-gitops-member-create-namespaces", "ClusterRoleBinding//mcs-gitops-member-create-namespaces"},
	}
	for dir, kinds := range want {
		t.Run(dir, func(t *testing.T) {
			res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
			require.NoError(t, err)
			var objs []*unstructured.Unstructured
			var names []string
			for _, r := range res.Resources() {
				m, err := r.Map()
				require.NoError(t, err)
				u := &unstructured.Unstructured{Object: m}
				objs = append(objs, u)
				names = append(names, u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName())
			}
			for _, k := range kinds {
				found := false
				for _, n := range names {
					if len(n) >= len(k) && n[:len(k)] == k {
						found = true
					}
				}
				assert.True(t, found, "%s: no %s in %v", dir, k, names)
			}
			require.NoError(t, envtest.ServerSideApply(ctx, c.Client, objs, true))
		})
	}
	_, err = v1alpha1.LoadFile(filepath.Join(root, "base", "clusterset.yaml"))
	require.NoError(t, err, "the example config in deploy/base loads")
}
