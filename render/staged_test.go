// SPDX-License-Identifier: Apache-2.0

package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

func pathsIn(out *Output, member string) []string {
	var paths []string
	for _, m := range out.Members {
		if m.Name == member {
			for _, o := range m.Objects {
				paths = append(paths, o.Path)
			}
		}
	}
	return paths
}

// A new export staged: the members behind get nothing of it, neither
// objects nor a place among the importers, and are listed as behind; the
// members reached import it as without a rollout.
func TestStagedNewImport(t *testing.T) {
	cfg := clusterSetOf("us-1", "eu-1", "eu-2")
	live := []*snapshot.Snapshot{exporterSnapshot(t, "us-1", "2026-01-01T00:00:00Z", nil), importerSnapshot("eu-1"), importerSnapshot("eu-2")}
	before := []*snapshot.Snapshot{importerSnapshot("us-1"), importerSnapshot("eu-1"), importerSnapshot("eu-2")}
	plain, err := Render(cfg, live, nil)
	require.NoError(t, err)

	out, err := RenderWith(cfg, live, Options{Staged: &Staged{
		Before: before,
		Behind: map[ImportKey]bool{{Member: "eu-2", Namespace: "shop", Name: "cart"}: true},
		Notes:  map[string]string{"shop/cart": "rolling out: wave 1 of 2"},
	}})
	require.NoError(t, err)
	rep := out.Report.Services[0]
	assert.Equal(t, []string{"us-1", "eu-1"}, rep.ImportedBy)
	assert.Equal(t, []string{"eu-2"}, rep.Behind)
	assert.Empty(t, pathsIn(out, "eu-2"), "a member behind gets nothing of a service it did not import before")
	assert.Equal(t, pathsIn(plain, "eu-1"), pathsIn(out, "eu-1"), "a member reached renders as without a rollout")
	ready, ok := exportOf(t, rep, "us-1").Condition("Ready")
	require.True(t, ok)
	assert.Contains(t, ready.Message, "; rolling out: wave 1 of 2")
}

// A port change staged: a member behind keeps the ServiceImport and
// derived Service of the old port, its endpoints still live.
func TestStagedPortChange(t *testing.T) {
	cfg := clusterSetOf("us-1", "eu-1", "eu-2")
	newPort := func(svc *corev1.Service, _ *mcsv1alpha1.ServiceExport) { svc.Spec.Ports[0].Port = 8080 }
	live := []*snapshot.Snapshot{exporterSnapshot(t, "us-1", "2026-01-01T00:00:00Z", newPort), importerSnapshot("eu-1"), importerSnapshot("eu-2")}
	before := []*snapshot.Snapshot{exporterSnapshot(t, "us-1", "2026-01-01T00:00:00Z", nil), importerSnapshot("eu-1"), importerSnapshot("eu-2")}
	out, err := RenderWith(cfg, live, Options{Staged: &Staged{
		Before: before,
		Behind: map[ImportKey]bool{{Member: "eu-2", Namespace: "shop", Name: "cart"}: true},
	}})
	require.NoError(t, err)
	assert.Equal(t, int32(8080), serviceImportIn(t, out, "eu-1").Spec.Ports[0].Port)
	assert.Equal(t, int32(80), serviceImportIn(t, out, "eu-2").Spec.Ports[0].Port)
	rep := out.Report.Services[0]
	assert.Equal(t, []string{"us-1", "eu-1", "eu-2"}, rep.ImportedBy)
	assert.Equal(t, []string{"eu-2"}, rep.Behind)
}

// The staging is part of a service's Inputs: a cache keyed by them sees
// a wave move.
func TestStagedInputs(t *testing.T) {
	cfg := clusterSetOf("us-1", "eu-1")
	live := []*snapshot.Snapshot{exporterSnapshot(t, "us-1", "2026-01-01T00:00:00Z", nil), importerSnapshot("eu-1")}
	before := []*snapshot.Snapshot{importerSnapshot("us-1"), importerSnapshot("eu-1")}
	prep := func(st *Staged) Inputs {
		p, err := Prepare(cfg, live, Options{Staged: st})
		require.NoError(t, err)
		return p.Inputs(0)
	}
	behind := &Staged{Before: before, Behind: map[ImportKey]bool{{Member: "eu-1", Namespace: "shop", Name: "cart"}: true}}
	assert.False(t, prep(nil).Same(prep(behind)))
	assert.True(t, prep(nil).Same(prep(&Staged{Before: before})), "a staging with nobody behind is none")
	assert.True(t, prep(behind).Same(prep(behind)))
}
