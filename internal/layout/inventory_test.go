// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInventoryRecordRoundTrip(t *testing.T) {
	r := &InventoryRecord{
		Namespace: "fleet", MatchLabels: map[string]string{"x-k8s.io/cluster-manager": "open-cluster-management"},
		Members: []InventoryMember{
			{Name: "eu-2", Profile: "fleet/eu-2", ClusterManager: "open-cluster-management", ClusterID: "eu-two", Labels: map[string]string{"region": "eu"}},
			{Name: "eu-1", Profile: "fleet/eu-1"},
		},
		Refused: []InventoryRefusal{{Profile: "fleet/z", Reason: "b"}, {Profile: "fleet/a", Reason: "a"}},
	}
	b, err := FormatInventory(r)
	require.NoError(t, err)
	assert.Equal(t, "fleet/eu-2", r.Members[0].Profile, "the record given is not sorted in place")
	again, err := FormatInventory(r)
	require.NoError(t, err)
	assert.Equal(t, b, again)
	back, err := ParseInventory(b)
	require.NoError(t, err)
	assert.Equal(t, []string{"eu-1", "eu-2"}, []string{back.Members[0].Name, back.Members[1].Name})
	assert.Equal(t, "fleet/a", back.Refused[0].Profile)
	b2, err := FormatInventory(back)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(b2), "formats to the same bytes again")

	none, err := ParseInventory(nil)
	require.NoError(t, err)
	assert.Nil(t, none)

	for _, bad := range []string{
		"namespace: fleet\nmembers:\n- {name: a}\n",
		"namespace: fleet\nmembers:\n- {name: a, profile: fleet/a}\n- {name: a, profile: fleet/b}\n",
		"namespace: fleet\nmembers: []\nsurprise: 1\n",
	} {
		_, err := ParseInventory([]byte(bad))
		assert.ErrorContains(t, err, InventoryFile, bad)
	}
}

// FuzzParseInventory: status/inventory.yaml is a file a person may edit;
// whatever parses formats to bytes that parse to the same record.
func FuzzParseInventory(f *testing.F) {
	f.Add([]byte("namespace: fleet\nmembers:\n- {name: a, profile: fleet/a, clusterID: x, labels: {region: eu}}\nrefused:\n- {profile: fleet/B, reason: not a label}\nheld: why\n"))
	f.Add([]byte("namespace: fleet\nmembers: []\n"))
	f.Add([]byte("members:\n- name: a\n  profile: fleet/a\n- name: a\n  profile: fleet/b\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseInventory(data)
		if err != nil || r == nil {
			return
		}
		b, err := FormatInventory(r)
		require.NoError(t, err)
		again, err := ParseInventory(b)
		require.NoError(t, err, "%s", b)
		b2, err := FormatInventory(again)
		require.NoError(t, err)
		assert.Equal(t, string(b), string(b2))
	})
}
