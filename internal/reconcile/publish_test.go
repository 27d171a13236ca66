// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// What a cycle hands apply from memory is what its commit holds: the files
// under the roots byte for byte, and the report they read back as (but
// for the ClusterSet warnings, which no status file keeps). Checked on a
// commit, on a cycle that changes nothing (rendered, then reused), and on
// a one-endpoint change and back.
func TestPublishHandsApplyTheCommittedBytes(t *testing.T) {
	l, results, moved := demoLoop(t)
	for i, step := range []struct {
		results []clusters.Result
		changed bool
	}{{results, true}, {results, false}, {results, false}, {moved, true}, {moved, false}, {moved, false}, {results, true}} {
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

// A render that changed nothing is reused, without rendering or hashing,
// while the commit, every member's snapshot bytes and the health are the
// same; any of them changing renders again.
func TestPublishReusesAnUnchangedRender(t *testing.T) {
	l, results, moved := demoLoop(t)
	// Only member 1's health differs from moved: its snapshot as last
	// committed stands in, the same bytes.
	unreachable := slices.Clone(moved)
	unreachable[1] = clusters.Result{Member: moved[1].Member, Err: errors.New("connection refused"), Reason: clusters.ReasonUnreachable}
	ctx := context.Background()
	var last map[string][]byte
	publish := func(results []clusters.Result) (reused, changed bool) {
		t.Helper()
		p, err := l.publish(ctx, results)
		require.NoError(t, err)
		reused = last != nil && reflect.ValueOf(p.files).UnsafePointer() == reflect.ValueOf(last).UnsafePointer()
		last = p.files
		return reused, p.changed
	}
	for i, step := range []struct {
		name            string
		results         []clusters.Result
		reused, changed bool
	}{
		{"first commit", results, false, true},
		{"rendered on the new commit: nothing changes", results, false, false},
		{"nothing changed since", results, true, false},
		{"again", results, true, false},
		{"an endpoint moved", moved, false, true},
		{"rendered on the new commit", moved, false, false},
		{"nothing changed since", moved, true, false},
		{"a member unreachable: its last snapshot stands in, health changes", unreachable, false, true},
		{"rendered on the new commit", unreachable, false, false},
		{"nothing changed since", unreachable, true, false},
	} {
		reused, changed := publish(step.results)
		assert.Equal(t, step.reused, reused, "step %d (%s): reused", i, step.name)
		assert.Equal(t, step.changed, changed, "step %d (%s): changed", i, step.name)
	}

	// A commit made elsewhere moves HEAD: the next cycle renders on it.
	_, _, err := l.Repo.Commit(map[string][]byte{"notes/elsewhere.txt": []byte("x\n")}, []string{"notes"}, gitsync.StaticMessage("elsewhere"))
	require.NoError(t, err)
	reused, changed := publish(unreachable)
	assert.False(t, reused, "HEAD moved")
	assert.False(t, changed)
	reused, _ = publish(unreachable)
	assert.True(t, reused)
}

// demoLoop is a Loop on an empty remote for the demo ClusterSet, the
// demo's members as read, and the same with one endpoint moved.
func demoLoop(t *testing.T) (l *Loop, results, moved []clusters.Result) {
	t.Helper()
	cfg, snaps, err := generate.Demo()
	require.NoError(t, err)
	results = readResults(snaps)
	return benchLoop(t, cfg), results, moveOneEndpoint(t, results)
}
