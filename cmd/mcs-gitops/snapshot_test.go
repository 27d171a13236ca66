// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestSnapshotCommand reads a real member holding the demo's cluster-3
// objects and writes its snapshot as a commit lays it out (a part per
// service under inputs/cluster-3/), which loads back with its exports; a
// second run writes nothing; a snapshot of before the split goes.
func TestSnapshotCommand(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	objs, err := envtest.LoadObjects("../../fixtures/demo/inputs/cluster-3.yaml")
	require.NoError(t, err)
	_, err = c.CreateObjects(context.Background(), objs)
	require.NoError(t, err)

	dir := t.TempDir()
	require.NoError(t, c.WriteKubeconfig(filepath.Join(dir, "member.kubeconfig")))
	cfg := filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: t\n"+
		"spec:\n  members:\n  - name: cluster-3\n    kubeconfig:\n      path: member.kubeconfig\n"), 0o644))

	legacy := filepath.Join(dir, "inputs", "cluster-3.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(legacy), 0o755))
	require.NoError(t, os.WriteFile(legacy, []byte("old\n"), 0o644))
	out, err := run(t, "snapshot", "--config", cfg, "--out", dir)
	require.NoError(t, err, out)
	assert.Contains(t, out, "read 1 of 1 member(s): 3 file(s) written")
	assert.NoFileExists(t, legacy, "the one file of before the split is removed")
	for _, part := range []string{"cluster.yaml", "db/postgres.yaml", "httpbin/httpbin.yaml"} {
		assert.FileExists(t, filepath.Join(dir, "inputs", "cluster-3", filepath.FromSlash(part)))
	}
	snaps, err := snapshot.LoadDir(filepath.Join(dir, "inputs"), []string{"cluster-3"}, time.Now())
	require.NoError(t, err)
	snap := snaps[0]
	data, err := os.ReadFile(filepath.Join(dir, "inputs", "cluster-3", "db", "postgres.yaml"))
	require.NoError(t, err)
	var exports []string
	for _, e := range snap.ServiceExports {
		exports = append(exports, e.Namespace+"/"+e.Name)
	}
	assert.ElementsMatch(t, []string{"db/postgres", "httpbin/httpbin"}, exports)
	assert.NotContains(t, string(data), "resourceVersion", "volatile fields are stripped")

	out, err = run(t, "snapshot", "--config", cfg, "--out", dir)
	require.NoError(t, err)
	assert.Contains(t, out, "0 file(s) written", "an unchanged member gives an identical file")
}
