// SPDX-License-Identifier: Apache-2.0

package render

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
)

// Render leaves its input as it found it, and gives the same output when
// run again on it: the loop hands the same parsed snapshots to render
// after render (snapshot.NormalizeCache), and a render that sorted or
// defaulted them in place would make the second output differ from a
// fresh one.
func TestRenderDoesNotModifyItsInput(t *testing.T) {
	for _, w := range []generate.Params{
		{Members: 3, Services: 40, ExportersPerService: 2, EndpointsPerExporter: 3, Seed: 7},
		{Members: 4, Services: 25, ExportersPerService: 3, EndpointsPerExporter: 2, Seed: 11},
	} {
		cfg, snaps := generate.ClusterSet(w)
		// The snapshots as the loop has them (normalized), and an
		// independent copy of each.
		copies := make([]*snapshot.Snapshot, len(snaps))
		for i, s := range snaps {
			_, given, err := snapshot.Normalize(s, "given.yaml")
			require.NoError(t, err)
			_, copied, err := snapshot.Normalize(s, "given.yaml")
			require.NoError(t, err)
			snaps[i], copies[i] = given, copied
		}
		first, err := Render(cfg, snaps, nil)
		require.NoError(t, err)
		for i := range snaps {
			if !reflect.DeepEqual(copies[i], snaps[i]) {
				t.Fatalf("%+v: Render modified the snapshot of %s", w, snaps[i].Member)
			}
		}
		second, err := Render(cfg, snaps, first.Report.Allocations())
		require.NoError(t, err)
		fresh, err := Render(cfg, copies, first.Report.Allocations())
		require.NoError(t, err)
		if !reflect.DeepEqual(second, fresh) {
			t.Fatalf("%+v: a render on snapshots already rendered differs from one on fresh copies", w)
		}
	}
}
