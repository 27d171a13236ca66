// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
)

// After its own commit the loop keeps the committed state from memory
// (advanceCommitted) instead of reading the commit back from Git. What it
// keeps must be what the read gives, report for report, through a first
// commit, an endpoint moving, an export withdrawn (a report removed) and
// the export back (a report added).
func TestCommittedStateOfOwnCommitEqualsReadBack(t *testing.T) {
	p := generate.Params{Members: 3, Services: 40, ExportersPerService: 2, EndpointsPerExporter: 3, Seed: 7}
	cfg, snaps := generate.ClusterSet(p)
	l := benchLoop(t, cfg)
	results := readResults(snaps)
	ctx := context.Background()
	for _, step := range []struct {
		name    string
		results []clusters.Result
	}{
		{"first", results},
		{"endpoint moved", moveOneEndpoint(t, results)},
		{"export withdrawn", withoutFirstExport(t, results)},
		{"export back", results},
	} {
		pub, err := l.publish(ctx, step.results)
		require.NoError(t, err, step.name)
		require.True(t, pub.changed, step.name)
		require.Equal(t, pub.commit, l.committedAt, "%s: the new commit's state is kept", step.name)
		read, err := l.loadCommitted(pub.commit)
		require.NoError(t, err)
		require.Equal(t, read, l.committed, "%s: the state kept is the state read back", step.name)
	}
}

// withoutFirstExport returns results with the first ServiceExport of the
// first member that has one gone.
func withoutFirstExport(t *testing.T, results []clusters.Result) []clusters.Result {
	t.Helper()
	out := append([]clusters.Result{}, results...)
	for i, r := range out {
		if len(r.Snapshot.ServiceExports) == 0 {
			continue
		}
		s := *r.Snapshot
		s.ServiceExports = s.ServiceExports[1:]
		out[i].Snapshot = &s
		return out
	}
	t.Fatal("no member exports anything")
	return nil
}
