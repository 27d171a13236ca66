// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInventory(t *testing.T) {
	cs, err := Parse("c.yaml", []byte(`apiVersion: mcs-gitops.io/v1alpha1
kind: ClusterSet
metadata: {name: prod}
spec:
  inventory:
    namespace: fleet
    matchLabels: {x-k8s.io/cluster-manager: open-cluster-management}
    providerFile: providers.json
  reach:
    namespaces:
    - name: shop
      members: {names: [eu-1]}
  rollout:
    waves:
    - {name: canary, members: {names: [eu-2]}}
`))
	require.NoError(t, err, "no hand-written member is needed, and selectors may name the inventory's")
	assert.Equal(t, "default", cs.Spec.Inventory.Group)
	assert.Empty(t, cs.Spec.Members)

	withMembers, err := cs.WithMembers([]Member{{Name: "eu-1", Kubeconfig: KubeconfigRef{ClusterProfile: &ClusterProfileRef{Namespace: "fleet", Name: "eu-1"}}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"eu-1"}, withMembers.MemberNames())
	assert.Equal(t, ModeFlat, withMembers.Spec.Members[0].Mode, "defaults apply to the members added")
	assert.Empty(t, cs.Spec.Members, "the config given is not changed")
	_, err = cs.WithMembers([]Member{{Name: "a", ClusterID: "x"}, {Name: "b", ClusterID: "x"}})
	assert.ErrorContains(t, err, `cluster ID "x" is already used`)
}

func TestParseRejectsBadInventory(t *testing.T) {
	for name, tc := range map[string]struct{ spec, want string }{
		"no namespace":  {"  inventory: {providerFile: p.json}\n", "spec.inventory.namespace: required"},
		"no file":       {"  inventory: {namespace: fleet}\n", "spec.inventory.providerFile: required"},
		"bad label":     {"  inventory: {namespace: fleet, providerFile: p.json, matchLabels: {\"a b\": c}}\n", "spec.inventory.matchLabels"},
		"no members":    {"  members: []\n", "at least one member is required (or spec.inventory)"},
		"profile alone": {"  members:\n  - name: a\n    kubeconfig: {clusterProfile: {namespace: fleet, name: a}}\n", "needs spec.inventory.providerFile"},
		"profile and path": {"  inventory: {namespace: fleet, providerFile: p.json}\n  members:\n  - name: a\n    kubeconfig: {path: a.yaml, clusterProfile: {namespace: fleet, name: a}}\n",
			"set only one of path, secretRef, inCluster and clusterProfile"},
		"profile ref": {"  inventory: {namespace: fleet, providerFile: p.json}\n  members:\n  - name: a\n    kubeconfig: {clusterProfile: {name: A_B}}\n",
			"spec.members[0].kubeconfig.clusterProfile.namespace: required"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata: {name: prod}\nspec:\n"+tc.spec))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
