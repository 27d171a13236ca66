// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Past graphMembers SUMMARY.md draws the matrix from counts alone: each
// cell is the number of services reachEdges puts on that edge, and the
// per-member table counts what each member reaches as member by member
// would.
func TestSummaryMatrixCountsEveryEdge(t *testing.T) {
	cfg, snaps := generate.ClusterSet(generate.Params{Members: graphMembers + 3, Services: 40, ExportersPerService: 2, EndpointsPerExporter: 1, Seed: 8})
	out, err := render.Render(cfg, snaps, nil)
	require.NoError(t, err)
	edges := reachEdges(out.Report.Services)
	counts := reachCounts(out.Report.Services)
	require.Len(t, counts, len(edges))
	for e, keys := range edges {
		require.Equal(t, len(keys), counts[e], "edge %v", e)
	}
	var names []string
	for _, m := range out.Members {
		names = append(names, m.Name)
	}
	sum := Summary(&out.Report, names)
	require.Contains(t, sum, "| reaches \\ through |")
	for _, m := range names {
		n := 0
		for i := range out.Report.Services {
			for _, to := range out.Report.Services[i].ImportedBy {
				if to == m {
					n++
				}
			}
		}
		require.Contains(t, sum, "\n| "+m+" | "+itoa(n)+" | ", "member %s reaches %d services", m, n)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
