// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// An offline render takes the inventory's members from the committed
// status/inventory.yaml: the same config renders the same tree with no
// management cluster, and without the record the inventory's snapshots
// are strays.
func TestRenderTakesInventoryMembersFromTheRecord(t *testing.T) {
	dir := copyDemo(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "clusterset.yaml"), []byte(`apiVersion: mcs-gitops.io/v1alpha1
kind: ClusterSet
metadata: {name: demo}
spec:
  inventory: {namespace: fleet, providerFile: providers.json}
  members:
  - name: cluster-3
    kubeconfig: {path: kubeconfigs/cluster-3.yaml}
  reach:
    namespaces:
    - name: httpbin
      services:
      - name: httpbin
        importers: {matchLabels: {region: eu}}
`), 0o644))
	rec, err := layout.FormatInventory(&layout.InventoryRecord{Namespace: "fleet", Members: []layout.InventoryMember{
		{Name: "cluster-1", Profile: "fleet/cluster-1", Labels: map[string]string{"region": "eu"}},
		{Name: "cluster-2", Profile: "fleet/cluster-2", ClusterID: "c2", Labels: map[string]string{"region": "us"}},
	}})
	require.NoError(t, err)
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"), "--out", dir}

	_, err = run(t, append([]string{"render"}, args...)...)
	require.Error(t, err, "without the record, cluster-1 and cluster-2 are no members")
	assert.Equal(t, 2, exitCode(err))

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "status"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, layout.InventoryFile), rec, 0o644))
	out, err := run(t, append([]string{"render"}, args...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "rendered 3 member(s)")
	assert.FileExists(t, filepath.Join(dir, "clusters", "cluster-1", "httpbin", "httpbin", "serviceimport.yaml"), "region=eu imports httpbin")
	assert.NoFileExists(t, filepath.Join(dir, "clusters", "cluster-2", "httpbin", "httpbin", "serviceimport.yaml"), "the reach policy selects by the record's labels")
	got, err := os.ReadFile(filepath.Join(dir, layout.InventoryFile))
	require.NoError(t, err)
	assert.Equal(t, string(rec), string(got), "the record is carried over as it is")

	out, err = run(t, append([]string{"render", "--check"}, args...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "current")
}
