// SPDX-License-Identifier: Apache-2.0

package snapshot_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
)

// An equal snapshot, even a new copy, gets the answer remembered; any
// change gets Normalize's answer for it.
func TestNormalizeCache(t *testing.T) {
	p := generate.Params{Members: 2, Services: 30, ExportersPerService: 1, EndpointsPerExporter: 3, Seed: 1}
	_, snaps := generate.ClusterSet(p)
	a := snaps[0]
	c := snapshot.NewNormalizeCache()

	data, parsed, err := c.Normalize(a, "a.yaml")
	require.NoError(t, err)
	wantData, wantParsed, err := snapshot.Normalize(a, "a.yaml")
	require.NoError(t, err)
	assert.Equal(t, wantData, data)
	assert.Equal(t, wantParsed, parsed)

	// A new read of an unchanged member: another copy, equal content.
	_, again := generate.ClusterSet(p)
	copyOfA := again[0]
	require.NotSame(t, a, copyOfA)
	data2, parsed2, err := c.Normalize(copyOfA, "a.yaml")
	require.NoError(t, err)
	assert.True(t, parsed == parsed2, "an equal snapshot is not normalized again")
	assert.Equal(t, data, data2)

	// One endpoint moves.
	moved := *copyOfA
	moved.EndpointSlices = append([]discoveryv1.EndpointSlice{}, moved.EndpointSlices...)
	es := moved.EndpointSlices[0].DeepCopy()
	es.Endpoints[0].Addresses = []string{"10.99.0.1"}
	moved.EndpointSlices[0] = *es
	data3, parsed3, err := c.Normalize(&moved, "a.yaml")
	require.NoError(t, err)
	want3, wantParsed3, err := snapshot.Normalize(&moved, "a.yaml")
	require.NoError(t, err)
	assert.Equal(t, want3, data3)
	assert.Equal(t, wantParsed3, parsed3)
	assert.NotEqual(t, data, data3)

	// Members are remembered apart.
	b := snaps[1]
	dataB, _, err := c.Normalize(b, "b.yaml")
	require.NoError(t, err)
	wantB, _, err := snapshot.Normalize(b, "b.yaml")
	require.NoError(t, err)
	assert.Equal(t, wantB, dataB)
	data4, _, err := c.Normalize(&moved, "a.yaml")
	require.NoError(t, err)
	assert.Equal(t, data3, data4)

	// No cache: Normalize.
	data5, _, err := (*snapshot.NormalizeCache)(nil).Normalize(a, "a.yaml")
	require.NoError(t, err)
	assert.Equal(t, wantData, data5)
}

// Part by part, the cache gives what Normalize gives, byte for byte and
// object for object, through a chain of changes to every scenario's
// members (each kind of object changed, added or removed) and back.
func TestNormalizeCacheByPart(t *testing.T) {
	scenarios, err := fixtures.LoadScenarios(filepath.Join("..", "..", "fixtures"))
	require.NoError(t, err)
	for _, sc := range scenarios {
		c := snapshot.NewNormalizeCache()
		for _, s := range sc.Snapshots {
			check := func(step string, s *snapshot.Snapshot) {
				t.Helper()
				wantData, wantParsed, wantErr := snapshot.Normalize(s, "m.yaml")
				data, parsed, err := c.Normalize(s, "m.yaml")
				if wantErr != nil {
					require.EqualError(t, err, wantErr.Error(), "%s: %s: %s", sc.Name, s.Member, step)
					return
				}
				require.NoError(t, err, "%s: %s: %s", sc.Name, s.Member, step)
				require.Equal(t, string(wantData), string(data), "%s: %s: %s", sc.Name, s.Member, step)
				require.Equal(t, wantParsed, parsed, "%s: %s: %s", sc.Name, s.Member, step)
			}
			check("first", s)
			for _, ch := range changes(s) {
				check(ch.name, ch.s)
			}
			check("back", s)
		}
	}
}

type changed struct {
	name string
	s    *snapshot.Snapshot
}

// changes are copies of s with one thing changed each.
func changes(s *snapshot.Snapshot) []changed {
	var out []changed
	add := func(name string, f func(c *snapshot.Snapshot) bool) {
		c := *s
		if f(&c) {
			out = append(out, changed{name, &c})
		}
	}
	add("an endpoint moves", func(c *snapshot.Snapshot) bool {
		if len(c.EndpointSlices) == 0 || len(c.EndpointSlices[0].Endpoints) == 0 {
			return false
		}
		c.EndpointSlices = slices.Clone(c.EndpointSlices)
		sl := c.EndpointSlices[0].DeepCopy()
		sl.Endpoints[0].Addresses = []string{"10.254.0.9"}
		c.EndpointSlices[0] = *sl
		return true
	})
	add("a slice goes", func(c *snapshot.Snapshot) bool {
		if len(c.EndpointSlices) == 0 {
			return false
		}
		c.EndpointSlices = c.EndpointSlices[1:]
		return true
	})
	add("an export goes", func(c *snapshot.Snapshot) bool {
		if len(c.ServiceExports) == 0 {
			return false
		}
		c.ServiceExports = c.ServiceExports[:len(c.ServiceExports)-1]
		return true
	})
	add("a port changes", func(c *snapshot.Snapshot) bool {
		if len(c.Services) == 0 || len(c.Services[0].Spec.Ports) == 0 {
			return false
		}
		c.Services = slices.Clone(c.Services)
		svc := c.Services[0].DeepCopy()
		svc.Spec.Ports[0].Port++
		c.Services[0] = *svc
		return true
	})
	add("a namespace goes", func(c *snapshot.Snapshot) bool {
		if len(c.Namespaces) == 0 {
			return false
		}
		c.Namespaces = c.Namespaces[1:]
		return true
	})
	add("the cluster ID changes", func(c *snapshot.Snapshot) bool {
		c.ClusterID = "changed-id"
		return true
	})
	add("policies go", func(c *snapshot.Snapshot) bool {
		if len(c.GlobalTrafficPolicies) == 0 {
			return false
		}
		c.GlobalTrafficPolicies = nil
		return true
	})
	add("rejected objects go", func(c *snapshot.Snapshot) bool {
		if len(c.Rejected) == 0 {
			return false
		}
		c.Rejected = nil
		return true
	})
	add("gateway addresses move", func(c *snapshot.Snapshot) bool {
		if len(c.GatewayAddresses) == 0 {
			return false
		}
		c.GatewayAddresses = []string{"192.0.2.200"}
		return true
	})
	add("everything goes", func(c *snapshot.Snapshot) bool {
		*c = snapshot.Snapshot{Member: c.Member}
		return true
	})
	return out
}
