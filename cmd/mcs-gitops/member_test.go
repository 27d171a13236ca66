// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// The commands as a user types them, on a real apiserver without a
// management cluster: join --dry-run writes nothing, join writes a
// kubeconfig file that doctor accepts (a warning: no CoreDNS ConfigMap
// here, so --strict fails), and after leave doctor fails on the revoked
// identity.
func TestMemberJoinDoctorLeaveCommands(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	dir := t.TempDir()
	admin := filepath.Join(dir, "admin.kubeconfig")
	require.NoError(t, c.WriteKubeconfig(admin))
	kc := filepath.Join(dir, "east.kubeconfig")

	out, err := run(t, "member", "join", "east", "--kubeconfig", admin, "--kubeconfig-out", kc, "--dry-run")
	require.NoError(t, err, out)
	assert.Contains(t, out, "ClusterRole mcs-gitops-member would be created")
	assert.Contains(t, out, "dry run: nothing was changed")
	assert.NoFileExists(t, kc)

	out, err = run(t, "member", "join", "east", "--kubeconfig", admin, "--kubeconfig-out", kc)
	require.NoError(t, err, out)
	assert.Contains(t, out, "ClusterRole mcs-gitops-member created")
	assert.Contains(t, out, "      path: "+kc)
	info, err := os.Stat(kc)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	data, err := os.ReadFile(kc)
	require.NoError(t, err)
	assert.Contains(t, string(data), "token:")
	assert.NotContains(t, string(data), "client-key-data", "never the administrator's credentials")

	config := filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(config, []byte("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: t\nspec:\n  members:\n"+
		"  - name: east\n    kubeconfig: {path: east.kubeconfig}\n"), 0o644))
	out, err = run(t, "doctor", "--config", config)
	require.NoError(t, err, out)
	assert.Contains(t, out, "ok   permissions")
	assert.Contains(t, out, "WARN coredns      no ConfigMap kube-system/coredns")
	assert.Contains(t, out, "0 error(s), 1 warning(s)")
	_, err = run(t, "doctor", "--config", config, "--strict")
	assert.Equal(t, 1, exitCode(err))
	out, err = run(t, "doctor", "--config", config, "--skip", "coredns", "--strict")
	assert.NoError(t, err, out)

	out, err = run(t, "member", "leave", "east", "--kubeconfig", admin)
	require.NoError(t, err, out)
	assert.Contains(t, out, "ServiceAccount kube-system/mcs-gitops deleted")
	for i := 0; ; i++ {
		out, err = run(t, "doctor", "--config", config)
		if exitCode(err) == 1 && strings.Contains(out, "rejects the credential") || i == 100 {
			break
		}
		time.Sleep(200 * time.Millisecond) // the apiserver caches a token's authentication for a few seconds
	}
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, "FAIL identity")
}

// --cluster-profile writes into the management cluster: without one it
// is a usage error before anything is installed.
func TestMemberJoinClusterProfileNeedsTheManagementCluster(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "member", "join", "east", "--kubeconfig", filepath.Join(dir, "none.kubeconfig"),
		"--kubeconfig-out", filepath.Join(dir, "east.kubeconfig"), "--cluster-profile")
	require.Error(t, err, out)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, err.Error(), "--cluster-profile needs --management-kubeconfig")
}
