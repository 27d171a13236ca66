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

	"github.com/mcs-gitops/mcs-gitops/internal/inventory"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
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

// run reloads on what changes the members, never on a heartbeat.
func TestInventoryFingerprint(t *testing.T) {
	src := &v1alpha1.InventorySource{Namespace: "fleet", ProviderFile: "p.json"}
	profile := func(mutate func(*inventory.Profile)) []*inventory.Profile {
		p := &inventory.Profile{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "eu-1", Labels: map[string]string{"region": "eu"}}}
		p.Status.Properties = []inventory.Property{{Name: inventory.PropertyClusterID, Value: "eu-1", LastObservedTime: &metav1.Time{Time: time.Unix(100, 0)}}}
		p.Status.AccessProviders = []inventory.AccessProvider{{Name: "secretreader"}}
		p.Status.AccessProviders[0].Cluster.Server = "https://eu-1:6443"
		if mutate != nil {
			mutate(p)
		}
		return []*inventory.Profile{p}
	}
	base := fingerprint(src, profile(nil), nil)
	assert.Equal(t, base, fingerprint(src, profile(func(p *inventory.Profile) {
		p.Status.Properties[0].LastObservedTime = &metav1.Time{Time: time.Unix(200, 0)}
		p.ResourceVersion = "42"
	}), nil), "a heartbeat")
	unhealthy := func(msg string) func(p *inventory.Profile) {
		return func(p *inventory.Profile) {
			p.Status.Conditions = []metav1.Condition{{Type: inventory.ConditionControlPlaneHealthy, Status: metav1.ConditionFalse, Message: msg}}
		}
	}
	assert.Equal(t, fingerprint(src, profile(unhealthy("down 5m")), nil), fingerprint(src, profile(unhealthy("down 6m")), nil), "the verdict, not its message")
	for what, m := range map[string]func(*inventory.Profile){
		"a label":      func(p *inventory.Profile) { p.Labels["region"] = "us" },
		"the health":   unhealthy("down"),
		"the address":  func(p *inventory.Profile) { p.Status.AccessProviders[0].Cluster.Server = "https://eu-1b:6443" },
		"a cluster ID": func(p *inventory.Profile) { p.Status.Properties[0].Value = "eu-one" },
	} {
		assert.NotEqual(t, base, fingerprint(src, profile(m), nil), what)
	}
	assert.NotEqual(t, base, fingerprint(src, nil, nil), "the profile gone")
}
