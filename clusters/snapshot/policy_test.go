// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// policiesAndGateway is shaped like `kubectl get -o yaml` of two policies
// (status and volatile metadata included, out of order) plus the gateway
// addresses property as a snapshot records it.
const policiesAndGateway = `apiVersion: mcs-gitops.io/v1alpha1
kind: GlobalTrafficPolicy
metadata:
  name: web
  namespace: shop
  uid: 2c7e
  resourceVersion: "912"
  generation: 3
  creationTimestamp: "2026-10-03T10:00:00Z"
  labels: {team: web}
  managedFields:
  - manager: kubectl
spec:
  lbType: ActiveActive
  targets:
  - clusterKey: eu/eu-1/default/west
    weight: 3
  - clusterKey: /default/east
status:
  conditions:
  - type: Accepted
    status: "True"
    reason: Accepted
    message: ok
    lastTransitionTime: "2026-10-03T10:00:01Z"
  clusters: [east, west]
  weights: {east: 1, west: 3}
---
apiVersion: mcs-gitops.io/v1alpha1
kind: GlobalTrafficPolicy
metadata: {name: api, namespace: shop}
spec:
  lbType: FailOver
  targets:
  - clusterKey: //default/east
---
apiVersion: about.k8s.io/v1alpha1
kind: ClusterProperty
metadata: {name: gateway-addresses.mcs-gitops.io}
spec: {value: "fd00::0a, 192.0.2.10,192.0.2.9,192.0.2.10"}
`

func TestParsePoliciesDropsStatusAndSorts(t *testing.T) {
	s, err := Parse("east", "inputs/east.yaml", []byte(policiesAndGateway))
	require.NoError(t, err)
	require.Len(t, s.GlobalTrafficPolicies, 2)
	api, web := s.GlobalTrafficPolicies[0], s.GlobalTrafficPolicies[1]
	assert.Equal(t, "shop/api", api.Namespace+"/"+api.Name, "sorted by namespace/name")
	assert.Equal(t, v1alpha1.FailOver, api.Spec.LbType)
	assert.Equal(t, v1alpha1.ActiveActive, web.Spec.LbType)
	require.Len(t, web.Spec.Targets, 2)
	require.NotNil(t, web.Spec.Targets[0].Weight)
	assert.EqualValues(t, 3, *web.Spec.Targets[0].Weight)
	assert.Nil(t, web.Spec.Targets[1].Weight)
	assert.Empty(t, web.Status.Conditions, "status is what mcs-gitops wrote, not input")
	assert.Empty(t, web.Status.Clusters)
	assert.Empty(t, web.Status.Weights)
	assert.Equal(t, []string{"192.0.2.9", "192.0.2.10", "fd00::a"}, s.GatewayAddresses,
		"canonical form, sorted by address, duplicates dropped")
}

func TestFormatPoliciesAndGatewayRoundTrip(t *testing.T) {
	s, err := Parse("east", "east.yaml", []byte(policiesAndGateway+"---\n"+kubectlOutput))
	require.NoError(t, err)
	out, err := Format(s)
	require.NoError(t, err)
	text := string(out)
	for _, volatile := range []string{"uid:", "resourceVersion", "generation", "managedFields", "status:\n  conditions",
		"clusters:", "weights:", "team: web", "2026-10-03"} {
		assert.NotContains(t, text, volatile)
	}
	assert.Contains(t, text, "apiVersion: mcs-gitops.io/v1alpha1\nkind: GlobalTrafficPolicy\nmetadata:\n  name: api\n  namespace: shop\nspec:\n  lbType: FailOver\n  targets:\n  - clusterKey: //default/east\n")
	assert.Contains(t, text, "apiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata:\n  name: gateway-addresses.mcs-gitops.io\nspec:\n  value: 192.0.2.9,192.0.2.10,fd00::a\n")
	assert.Contains(t, text, "weight: 3")
	for _, doc := range regexp.MustCompile(`(?m)^---.*\n`).Split(text, -1) {
		if strings.Contains(doc, "kind: GlobalTrafficPolicy") {
			assert.NotContains(t, doc, "status", "a policy is written without status")
		}
	}

	again, err := Parse("east", "east.yaml", out)
	require.NoError(t, err)
	require.Len(t, again.GlobalTrafficPolicies, 2)
	for i, p := range again.GlobalTrafficPolicies {
		assert.Equal(t, s.GlobalTrafficPolicies[i].Name, p.Name)
		assert.Equal(t, s.GlobalTrafficPolicies[i].Spec, p.Spec)
	}
	assert.Equal(t, s.GatewayAddresses, again.GatewayAddresses)
	out2, err := Format(again)
	require.NoError(t, err)
	assert.Equal(t, text, string(out2), "formatting is a fixed point")
}

func TestFormatWithoutGatewayAddressesWritesNoProperty(t *testing.T) {
	out, err := Format(&Snapshot{Member: "m", ClusterID: "m-id"})
	require.NoError(t, err)
	assert.NotContains(t, string(out), GatewayAddressesProperty)
}

func TestFormatNormalizesGatewayAddressesBuiltInCode(t *testing.T) {
	out, err := Format(&Snapshot{Member: "m", GatewayAddresses: []string{"10.0.0.2", "10.0.0.10", "10.0.0.2"}})
	require.NoError(t, err)
	assert.Contains(t, string(out), "value: 10.0.0.2,10.0.0.10\n")

	_, err = Format(&Snapshot{Member: "m", GatewayAddresses: []string{"gw.example.com"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `member "m"`)
	assert.Contains(t, err.Error(), `"gw.example.com" is not an IP address`)
}

func TestParsePolicyAndGatewayErrors(t *testing.T) {
	gtp := func(ns, name string) string {
		return "apiVersion: mcs-gitops.io/v1alpha1\nkind: GlobalTrafficPolicy\nmetadata:\n  name: " + name +
			"\n  namespace: " + ns + "\nspec:\n  lbType: Locality\n"
	}
	prop := func(value string) string {
		return "apiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: gateway-addresses.mcs-gitops.io}\nspec: {value: \"" + value + "\"}\n"
	}
	cases := []struct {
		name, input string
		want        []string
	}{
		{"duplicate policy", gtp("shop", "web") + "---\n" + gtp("shop", "web"),
			[]string{"in.yaml:9:", "GlobalTrafficPolicy shop/web", "duplicate object (first at line 1)"}},
		{"policy name not a Service name", gtp("shop", "web.v2"),
			[]string{"in.yaml:1:", "GlobalTrafficPolicy shop/web.v2", "metadata.name must be a valid Service name"}},
		{"policy without namespace", "apiVersion: mcs-gitops.io/v1alpha1\nkind: GlobalTrafficPolicy\nmetadata: {name: web}\nspec: {lbType: Locality}\n",
			[]string{"GlobalTrafficPolicy /web", "metadata.namespace is required"}},
		{"policy in another version", "apiVersion: mcs-gitops.io/v1beta1\nkind: GlobalTrafficPolicy\nmetadata: {name: web, namespace: shop}\n",
			[]string{"mcs-gitops.io/v1beta1 is not supported"}},
		{"policy with a malformed spec", "apiVersion: mcs-gitops.io/v1alpha1\nkind: GlobalTrafficPolicy\nmetadata: {name: web, namespace: shop}\nspec: {targets: 3}\n",
			[]string{"GlobalTrafficPolicy", "cannot unmarshal"}},
		{"gateway address is a name", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n" + prop("192.0.2.1,gw.example.com"),
			[]string{"in.yaml:5:", "ClusterProperty gateway-addresses.mcs-gitops.io", `"gw.example.com" is not an IP address`}},
		{"gateway address with a zone", prop("fe80::1%eth0"), []string{`"fe80::1%eth0" is not an IP address`}},
		{"empty gateway address in a list", prop("192.0.2.1,,192.0.2.2"), []string{`"" is not an IP address`}},
		{"empty gateway addresses", prop(""), []string{"in.yaml:1:", "spec.value: is empty"}},
		{"two gateway address properties", prop("192.0.2.1") + "---\n" + prop("192.0.2.2"), []string{"in.yaml:6:", "appears twice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("m", "in.yaml", []byte(tc.input))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// A policy whose spec breaks the rules is still loaded: the renderer, not
// the loader, tells the user on the policy's status why it is not applied.
func TestParseKeepsPolicyWithInvalidSpec(t *testing.T) {
	in := "apiVersion: mcs-gitops.io/v1alpha1\nkind: GlobalTrafficPolicy\nmetadata: {name: web, namespace: shop}\nspec:\n  lbType: FailOver\n"
	s, err := Parse("m", "in.yaml", []byte(in))
	require.NoError(t, err)
	require.Len(t, s.GlobalTrafficPolicies, 1)
	assert.NotEmpty(t, s.GlobalTrafficPolicies[0].Validate())
	out, err := Format(s)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(out), "spec:\n  lbType: FailOver\n"), string(out))
}
