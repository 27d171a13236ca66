// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func profile(name string, labels map[string]string, props ...string) *Profile {
	p := &Profile{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name, Labels: labels}}
	p.Spec.ClusterManager.Name = "open-cluster-management"
	for i := 0; i+1 < len(props); i += 2 {
		p.Status.Properties = append(p.Status.Properties, Property{Name: props[i], Value: props[i+1]})
	}
	return p
}

func TestMembershipFromProfiles(t *testing.T) {
	src := &v1alpha1.InventorySource{Namespace: "fleet", ProviderFile: "providers.json", MatchLabels: map[string]string{LabelClusterSet: "prod"}}
	profiles := []*Profile{
		profile("eu-2", map[string]string{"region": "eu", "mcs-gitops.io/member": "forged"}, PropertyClusterID, "eu-two",
			PropertyRegion, "europe-west4", PropertyZone, "Not_A_Label"),
		profile("eu-1", map[string]string{"region": "eu"}),
		profile("hand", nil),
		profile("web.us-central1.prod", nil),
		profile("z-clash", nil, PropertyClusterID, "eu-two"),
		profile("badid", nil, PropertyClusterID, "not_a_label"),
		profile("taken", nil, PropertyClusterID, "hand-id"),
	}
	r := Membership(src, profiles, map[string]string{"hand": "hand-id"})
	assert.Equal(t, "fleet", r.Namespace)
	assert.Equal(t, []layout.InventoryMember{
		{Name: "eu-1", Profile: "fleet/eu-1", ClusterManager: "open-cluster-management", Labels: map[string]string{"region": "eu"}},
		{Name: "eu-2", Profile: "fleet/eu-2", ClusterManager: "open-cluster-management", ClusterID: "eu-two", Labels: map[string]string{"region": "eu"}, Region: "europe-west4"},
	}, r.Members[:2], "sorted by profile name; the cluster ID from the KEP-2149 property; the region property (a zone that is no DNS label left out); mcs-gitops's own label keys dropped")
	require.Len(t, r.Members, 3)
	assert.Equal(t, MemberName("web.us-central1.prod"), r.Members[2].Name, "a profile name that is no DNS label gets a member name that is")
	assert.Equal(t, "fleet/web.us-central1.prod", r.Members[2].Profile)
	reasons := map[string]string{}
	for _, x := range r.Refused {
		reasons[x.Profile] = x.Reason
	}
	assert.Contains(t, reasons["fleet/hand"], "written in clusterset.yaml")
	assert.Contains(t, reasons["fleet/badid"], `"not_a_label" is not a DNS label`)
	assert.Contains(t, reasons["fleet/z-clash"], `cluster ID "eu-two" is already member eu-2's`, "a profile sorted after the holder loses")
	assert.Contains(t, reasons["fleet/taken"], "hand-written member hand")
	assert.Len(t, r.Refused, 4)

	cfg := &v1alpha1.ClusterSet{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind, Metadata: v1alpha1.Metadata{Name: "prod"},
		Spec: v1alpha1.ClusterSetSpec{Inventory: src, Members: []v1alpha1.Member{{Name: "hand", ClusterID: "hand-id", Kubeconfig: v1alpha1.KubeconfigRef{InCluster: true}}}}}
	cfg.Default()
	out, err := layout.WithInventory(cfg, r, "test")
	require.NoError(t, err, "what Membership admits makes a valid config with the hand-written members")
	assert.Equal(t, []string{"hand", "eu-1", "eu-2", MemberName("web.us-central1.prod")}, out.MemberNames())
	m, _ := out.Member("eu-2")
	assert.Equal(t, &v1alpha1.ClusterProfileRef{Namespace: "fleet", Name: "eu-2"}, m.Kubeconfig.ClusterProfile)
	assert.Equal(t, v1alpha1.ModeFlat, m.Mode)
	assert.Equal(t, "default", m.Group)
	assert.Equal(t, "europe-west4", m.Region)
	assert.Equal(t, []string{"hand"}, cfg.MemberNames(), "the config given is not changed")
}

func TestUnhealthyOnlyOnFalse(t *testing.T) {
	p := profile("a", nil)
	bad, _ := p.Unhealthy()
	assert.False(t, bad, "no condition is no verdict")
	p.Status.Conditions = []metav1.Condition{{Type: ConditionControlPlaneHealthy, Status: metav1.ConditionUnknown}}
	bad, _ = p.Unhealthy()
	assert.False(t, bad, "Unknown is no verdict")
	p.Status.Conditions = []metav1.Condition{{Type: "Joined", Status: metav1.ConditionFalse}, {Type: ConditionControlPlaneHealthy, Status: metav1.ConditionFalse, Reason: "Unreachable", Message: "lease expired"}}
	bad, msg := p.Unhealthy()
	assert.True(t, bad)
	assert.Equal(t, "Unreachable: lease expired", msg)
}

func TestProvidersPreferAccessProviders(t *testing.T) {
	p := profile("a", nil)
	p.Status.AccessProviders = []AccessProvider{{Name: "token"}}
	p.Status.CredentialProviders = []AccessProvider{{Name: "token"}, {Name: "legacy"}}
	p.Status.AccessProviders[0].Cluster.Server = "https://new"
	p.Status.CredentialProviders[0].Cluster.Server = "https://old"
	got := p.Providers()
	require.Len(t, got, 2)
	assert.Equal(t, "https://new", got[0].Cluster.Server, "accessProviders win a name clash")
	assert.Equal(t, "legacy", got[1].Name)
}

func TestResolveHoldsAnEmptiedOrUnlistableInventory(t *testing.T) {
	src := &v1alpha1.InventorySource{Namespace: "fleet", ProviderFile: "p.json"}
	committed := Membership(src, []*Profile{profile("a", nil), profile("b", nil)}, nil)

	r, held, err := Resolve(src, []*Profile{profile("a", nil)}, nil, nil, committed)
	require.NoError(t, err)
	assert.False(t, held, "one profile gone is a real departure")
	assert.Len(t, r.Members, 1)
	assert.Empty(t, r.Held)

	r, held, err = Resolve(src, nil, nil, nil, committed)
	require.NoError(t, err)
	assert.True(t, held, "an inventory emptied at once")
	assert.Equal(t, committed.Members, r.Members, "the committed members stand")
	assert.Contains(t, r.Held, "lists no ClusterProfile where the last commit had 2 members")
	assert.Empty(t, committed.Held, "the committed record is not changed")

	listErr := errors.New("connection refused")
	r, held, err = Resolve(src, nil, listErr, nil, committed)
	require.NoError(t, err)
	assert.True(t, held)
	assert.Equal(t, committed.Members, r.Members)
	assert.Contains(t, r.Held, "could not be listed")

	_, _, err = Resolve(src, nil, listErr, nil, nil)
	assert.ErrorIs(t, err, listErr, "nothing committed: nothing to stand in")

	r, held, err = Resolve(src, nil, nil, nil, nil)
	require.NoError(t, err)
	assert.False(t, held, "an empty inventory with nothing committed is just empty")
	assert.Empty(t, r.Members)

	r, held, err = Resolve(src, []*Profile{profile("c", nil)}, nil, nil, &layout.InventoryRecord{Namespace: "fleet", Held: "earlier"})
	require.NoError(t, err)
	assert.False(t, held)
	assert.Empty(t, r.Held, "a listed profile ends a hold")
}

func TestMemberName(t *testing.T) {
	assert.Equal(t, "eu-1", MemberName("eu-1"), "a DNS label is kept")
	dotted := MemberName("web.us-central1.my-project")
	assert.Regexp(t, `^web-us-central1-my-project-[0-9a-f]{8}$`, dotted, "a name with dots")
	assert.Equal(t, dotted, MemberName("web.us-central1.my-project"), "the same every time")
	assert.NotEqual(t, MemberName("a_b"), MemberName("a.b"), "two profiles never map to one member")
	long := MemberName(strings.Repeat("x", 60) + "_" + strings.Repeat("y", 60))
	assert.Len(t, long, 63)
	assert.Empty(t, validation.IsDNS1123Label(long))
	for _, odd := range []string{"___", "-a-", "A", "x.y.z", strings.Repeat("_", 100)} {
		assert.Empty(t, validation.IsDNS1123Label(MemberName(odd)), odd)
	}
}
