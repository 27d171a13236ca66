// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

var fleet = []v1alpha1.Member{
	{Name: "eu-1", Labels: map[string]string{"region": "eu", "canary": "yes"}},
	{Name: "eu-2", Labels: map[string]string{"region": "eu"}},
	{Name: "us-1", Labels: map[string]string{"region": "us"}},
	{Name: "ap-1", Labels: map[string]string{"region": "ap"}},
}

// A member is in the first wave that selects it; the members no wave
// selects make a last wave; a wave left with nobody stays, empty, so wave
// numbers follow the config.
func TestWaves(t *testing.T) {
	p := v1alpha1.RolloutPolicy{Waves: []v1alpha1.RolloutWave{
		{Name: "canary", Members: v1alpha1.MemberSelector{MatchLabels: map[string]string{"canary": "yes"}}, Soak: "5m"},
		{Name: "eu", Members: v1alpha1.MemberSelector{MatchLabels: map[string]string{"region": "eu"}}, Soak: "10m"},
		{Name: "eu-again", Members: v1alpha1.MemberSelector{Names: []string{"eu-2"}}},
		{Name: "us", Members: v1alpha1.MemberSelector{Names: []string{"us-1"}}},
	}}
	waves, err := Waves(p, fleet)
	require.NoError(t, err)
	assert.Equal(t, []Wave{
		{Name: "canary", Members: []string{"eu-1"}, Soak: 5 * time.Minute},
		{Name: "eu", Members: []string{"eu-2"}, Soak: 10 * time.Minute},
		{Name: "eu-again"},
		{Name: "us", Members: []string{"us-1"}},
		{Name: RestWave, Members: []string{"ap-1"}},
	}, waves)

	p.Waves = append(p.Waves, v1alpha1.RolloutWave{Name: "everyone"})
	waves, err = Waves(p, fleet)
	require.NoError(t, err)
	assert.Equal(t, "everyone", waves[len(waves)-1].Name, "a wave selecting everyone left: no rest wave")
	assert.Equal(t, []string{"ap-1"}, waves[len(waves)-1].Members)

	_, err = Waves(v1alpha1.RolloutPolicy{Waves: []v1alpha1.RolloutWave{{Name: "x", Soak: "soon"}}}, fleet)
	assert.ErrorContains(t, err, "spec.rollout.waves[0].soak")
}

// Each kind of change is staged only when the policy stages it; churn,
// withdrawals, conflicts and policies never are.
func TestStaged(t *testing.T) {
	waves := []v1alpha1.RolloutWave{{Name: "one", Members: v1alpha1.MemberSelector{Names: []string{"eu-1"}}}}
	all := v1alpha1.RolloutPolicy{Waves: waves}
	newExporter := change.Export{Member: "us-1", Old: "", New: change.Valid}
	cases := []struct {
		name   string
		policy v1alpha1.RolloutPolicy
		change change.Service
		want   []v1alpha1.RolloutKind
	}{
		{"a new import", all, change.Service{Gained: []string{"eu-1", "eu-2"}, Exports: []change.Export{newExporter}},
			[]v1alpha1.RolloutKind{v1alpha1.RolloutImport, v1alpha1.RolloutExporter}},
		{"a port change", all, change.Service{Fields: []change.Field{{Name: "port http", Old: "80/TCP", New: "8080/TCP"}}},
			[]v1alpha1.RolloutKind{v1alpha1.RolloutPorts}},
		{"type and families", all, change.Service{Fields: []change.Field{{Name: "type", Old: "ClusterSetIP", New: "Headless"}, {Name: "ipFamilies", Old: "IPv4", New: "IPv4,IPv6"}}},
			[]v1alpha1.RolloutKind{v1alpha1.RolloutType, v1alpha1.RolloutFamilies}},
		{"only the kinds the policy stages", v1alpha1.RolloutPolicy{Waves: waves, Stage: []v1alpha1.RolloutKind{v1alpha1.RolloutPorts}},
			change.Service{Gained: []string{"eu-1"}, Fields: []change.Field{{Name: "port http", New: "80/TCP"}}},
			[]v1alpha1.RolloutKind{v1alpha1.RolloutPorts}},
		{"endpoint churn", all, change.Service{Endpoints: []change.Count{{Member: "us-1", Old: 3, New: 2}}}, nil},
		{"a member losing the service, an exporter leaving", all,
			change.Service{Lost: []string{"eu-2"}, Exports: []change.Export{{Member: "us-1", Old: change.Valid, New: ""}}}, nil},
		{"labels and traffic policies", all, change.Service{Fields: []change.Field{{Name: "label team", New: "a"}},
			Policies: []change.Policy{{Member: "eu-1"}}}, nil},
		{"no waves: nothing staged", v1alpha1.RolloutPolicy{}, change.Service{Gained: []string{"eu-1"}}, nil},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, Staged(tc.policy, tc.change), tc.name)
	}
}
