// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// The cache's answer for a changed member is made part by part, not by
// falling back to Normalize: one endpoint moving formats and parses one
// part again and takes every other from before, and the whole is what
// Normalize gives.
func TestNormalizePartsReformatsOnlyTheChangedPart(t *testing.T) {
	s := &Snapshot{Member: "a", ClusterID: "a"}
	for _, name := range []string{"api", "db", "web"} {
		s.ServiceExports = append(s.ServiceExports, mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
			CreationTimestamp: metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
		s.EndpointSlices = append(s.EndpointSlices, discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: name + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
		})
	}
	first, err := normalizeParts(s, "a.yaml", nil)
	require.NoError(t, err)

	moved := *s
	moved.EndpointSlices = append([]discoveryv1.EndpointSlice{}, s.EndpointSlices...)
	sl := moved.EndpointSlices[1].DeepCopy()
	sl.Endpoints[0].Addresses = []string{"10.0.0.2"}
	moved.EndpointSlices[1] = *sl
	next, err := normalizeParts(&moved, "a.yaml", first.parts)
	require.NoError(t, err)

	for name, p := range next.parts {
		same := &p.data[0] == &first.parts[name].data[0]
		require.Equal(t, name != "shop/db", same, "part %s", name)
	}
	data, parsed, err := Normalize(&moved, "a.yaml")
	require.NoError(t, err)
	require.Equal(t, string(data), string(next.data))
	require.Equal(t, parsed, next.parsed)
}
