// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/mcs-gitops/mcs-gitops/internal/fleetstatus"
	"github.com/mcs-gitops/mcs-gitops/internal/member/doctor"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// TestStatus: status against a known world, before and after a sync, and
// with a member down; --wait imported times out before the sync and is
// met after it.
func TestStatus(t *testing.T) {
	defer func(d time.Duration) { waitPoll = d }(waitPoll)
	waitPoll = 100 * time.Millisecond
	cs := envtest.Start(t, 2)
	east, west := cs[0], cs[1]
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, east.WriteKubeconfig(filepath.Join(dir, "east.kubeconfig")))
	require.NoError(t, west.WriteKubeconfig(filepath.Join(dir, "west.kubeconfig")))
	remote := filepath.Join(dir, "remote.git")
	_, err := git.PlainInit(remote, true)
	require.NoError(t, err)
	config := filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(config, []byte("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: t\nspec:\n  members:\n"+
		"  - name: east\n    kubeconfig: {path: east.kubeconfig}\n  - name: west\n    kubeconfig: {path: west.kubeconfig}\n"+
		"  sync:\n    memberTimeout: 3s\n  git:\n    author: {name: Platform Bot, email: bot@example.invalid}\n"), 0o644))
	repoArgs := []string{"--config", config, "--repo", remote, "--workdir", filepath.Join(dir, "work")}

	require.NoError(t, envtest.EnsureNamespaces(ctx, east.Client, "shop"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, west.Client, "shop"))
	svc := tenant.Service("shop", "cart", tenant.Port("http", 80, 8080))
	tenant.Create(t, east.Client, svc, tenant.Slice(svc, "cart-east", discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.10", "10.1.0.11")...), tenant.Export("shop", "cart"))

	out, err := run(t, append([]string{"status", "--service", "shop/cart", "--wait", "imported", "--timeout", "300ms"}, repoArgs...)...)
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, "no commit yet")

	out, err = run(t, append([]string{"sync"}, repoArgs...)...)
	require.NoError(t, err, out)

	out, err = run(t, append([]string{"status", "--service", "shop/cart", "--wait", "imported", "--timeout", "30s"}, repoArgs...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "shop/cart  ClusterSetIP, imported everywhere")
	assert.Contains(t, out, "exported by east           2 ready endpoint(s)  Valid=True Conflict=False")
	assert.Contains(t, out, "by Platform Bot <bot@example.invalid>")
	assert.Contains(t, out, ": east exports shop/cart to west\n", "what the commit did to this service, in the change model's words")

	out, err = run(t, append([]string{"status", "-o", "json"}, repoArgs...)...)
	require.NoError(t, err, out)
	var v fleetstatus.View
	// The run helper mixes the log (stderr) in; the JSON is the stdout part.
	require.NoError(t, json.Unmarshal([]byte(out[strings.Index(out, "{\n"):]), &v))
	require.Len(t, v.Members, 2)
	assert.True(t, v.Members[0].Reachable && v.Members[1].Reachable)
	require.Len(t, v.Members[0].Health, 2, "identity and CRDs")
	assert.Equal(t, "identity", v.Members[0].Health[0].Name)
	assert.Equal(t, doctor.OK, v.Members[0].Health[1].Status, v.Members[0].Health[1].Message)
	require.Len(t, v.Services, 1)
	s := v.Services[0]
	assert.Equal(t, 2, s.Exporters[0].ReadyEndpoints)
	require.Len(t, s.Importers, 2)
	for _, i := range s.Importers {
		assert.True(t, i.Present, i.Member)
		assert.NotEmpty(t, i.IPs, i.Member)
	}
	require.NotNil(t, s.LastChange)
	assert.Equal(t, v.Commit.Hash, s.LastChange.Hash)
	assert.Equal(t, []string{"east exports shop/cart to west"}, s.Changed)

	// west goes down: status says so, and its import cannot be seen.
	require.NoError(t, west.StopAPIServer())
	out, err = run(t, append([]string{"status", "--member", "west"}, repoArgs...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "west                 UNREACHABLE")
	assert.Contains(t, out, "imported by west           MISSING")
	assert.NotContains(t, out, "exported by east", "--member shows that member's part only")
}
