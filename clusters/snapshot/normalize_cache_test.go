// SPDX-License-Identifier: Apache-2.0

package snapshot_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
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
