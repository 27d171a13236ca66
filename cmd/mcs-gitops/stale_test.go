// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// A commit made while a member is stale keeps the member's last snapshot
// in inputs/ (its exports are dropped from the render, not forgotten) and
// says so in status/members.yaml. Offline, render --check and diff --base
// must drop them the same way, or the loop's own commit is "stale" in CI
// and a pull request on top of it shows the stale exports coming back.
func TestStaleMemberRendersToItself(t *testing.T) {
	root, config := demoRepo(t)
	dir := filepath.Dir(config)
	cfg, err := v1alpha1.LoadFile(config)
	require.NoError(t, err)
	snaps, err := snapshot.LoadDir(filepath.Join(dir, "inputs"), cfg.MemberNames(), time.Now())
	require.NoError(t, err)
	// What the loop commits when cluster-3 is past staleAfter
	// (snapshot.Resolve): the render without its exports, the health
	// saying so, the snapshot as it was.
	since := metav1.NewTime(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	health := []snapshot.Health{{Member: "cluster-1", Reachable: true}, {Member: "cluster-2", Reachable: true},
		{Member: "cluster-3", Reason: "Unreachable", UnreachableSince: &since, ExportsDropped: true, Message: "stale"}}
	for _, s := range snaps {
		if s.Member == "cluster-3" {
			require.NotEmpty(t, s.ServiceExports, "the demo's cluster-3 exports something")
			s.ServiceExports = nil
		}
	}
	out, err := render.Render(cfg, snaps, nil)
	require.NoError(t, err)
	files, err := layout.Files(out)
	require.NoError(t, err)
	files[layout.HealthFile], err = layout.FormatHealth(health)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, layout.ClustersDir)))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, layout.StatusDir)))
	for p, b := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), b, 0o644))
	}
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "cluster-3 stale")

	got, err := run(t, "render", "--config", config, "--inputs", filepath.Join(dir, "inputs"), "--out", dir, "--check")
	require.NoError(t, err, "the stale commit renders to itself:\n%s", got)
	got, err = run(t, "diff", "--config", config, "--base", "HEAD~1", "-o", "json")
	assert.Equal(t, 1, exitCode(err), got)
	assert.Contains(t, got, `"name": "cluster-3"`)
	assert.Contains(t, got, `"new": "Stale"`, "the model says cluster-3 went stale")
	got, err = run(t, "diff", "--config", config, "--base", "HEAD", "-o", "json")
	assert.Equal(t, 0, exitCode(err), "HEAD against itself: no change, the stale exports stay dropped:\n%s", got)
}
