// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Serializing in batches (a first render of a large ClusterSet) gives the
// same files as in one go.
func TestRendererSerializesInBatches(t *testing.T) {
	defer func(n int) { flushJobs = n }(flushJobs)
	flushJobs = 7
	cfg, snaps := generate.ClusterSet(generate.Params{Members: 3, Services: 30, ExportersPerService: 2, EndpointsPerExporter: 2, Seed: 2})
	out, err := render.Render(cfg, snaps, nil)
	require.NoError(t, err)
	want, err := Files(out)
	require.NoError(t, err)
	got, _, err := (&Renderer{}).Render(cfg, snaps, render.Options{})
	require.NoError(t, err)
	require.Equal(t, want, got)
}
