package reconcile

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/layout"
)

// What a cycle hands apply from memory is what its commit holds: the files
// under the roots byte for byte, and the report they read back as (but
// for the ClusterSet warnings, which no status file keeps). Checked on a
// commit, on a cycle that changes nothing, and on a one-endpoint change.
func TestPublishHandsApplyTheCommittedBytes(t *testing.T) {
	cfg, snaps, err := generate.Demo()
	require.NoError(t, err)
	l := benchLoop(t, cfg)
	results := make([]clusters.Result, len(snaps))
	for i, s := range snaps {
		results[i] = clusters.Result{Member: s.Member, Snapshot: s}
	}
	moved := moveOneEndpoint(t, results)
	for i, step := range []struct {
		results []clusters.Result
		changed bool
	}{{results, true}, {results, false}, {moved, true}} {
		p, err := l.publish(context.Background(), step.results)
		require.NoError(t, err)
		assert.Equal(t, step.changed, p.changed, "step %d", i)
		head, err := l.Repo.Head()
		require.NoError(t, err)
		assert.Equal(t, head, p.commit, "step %d", i)

		committed, err := l.Repo.Files(p.commit, layout.Roots...)
		require.NoError(t, err)
		assert.Equal(t, committed, p.files, "step %d: the files apply gets are the commit's", i)
		report, err := layout.ReadReport(committed)
		require.NoError(t, err)
		want := *p.report
		want.Warnings = nil
		assert.Equal(t, &want, report, "step %d: the report apply gets is the commit's", i)
		if step.changed {
			assert.NotEmpty(t, p.message)
		}
	}
}
