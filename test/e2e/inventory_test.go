// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/inventory"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/member/join"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// remoteFile is path in the newest commit of branch main of the bare
// repository remote, "" when absent.
func remoteFile(t *testing.T, remote, path string) string {
	t.Helper()
	r, err := git.PlainOpen(remote)
	require.NoError(t, err)
	ref, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	if err != nil {
		return ""
	}
	c, err := r.CommitObject(ref.Hash())
	require.NoError(t, err)
	f, err := c.File(path)
	if err != nil {
		return ""
	}
	s, err := f.Contents()
	require.NoError(t, err)
	return s
}

// TestMembersFromTheClusterInventory: the members of a ClusterSet come
// from ClusterProfiles that `member join --cluster-profile` registered;
// mcs-gitops, run as its own ServiceAccount, gets every member's
// credential from an exec plugin (its own binary, `credential
// secret-token`, reading the token Secret in the management cluster).
// A fourth profile joins and is committed and served; the reach policy
// selects members by profile labels; a profile that says the control
// plane is unhealthy is reported, and its exports dropped after
// staleAfter; an emptied inventory withdraws nothing.
func TestMembersFromTheClusterInventory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcs-gitops and runs it against five apiservers")
	}
	binary := buildBinary(t)
	cs := envtest.Start(t, 5)
	mgmt, members := cs[0], cs[1:]
	ctx := context.Background()
	require.NoError(t, envtest.ServerSideApply(ctx, mgmt.Client, build(t, filepath.Join("..", "..", "deploy", "base")), false))
	require.NoError(t, envtest.EnsureNamespaces(ctx, mgmt.Client, "fleet"))
	// What docs/inventory.md tells the platform team to grant: reading
	// the inventory's namespace.
	require.NoError(t, mgmt.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "mcs-gitops-inventory"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{inventory.Group}, Resources: []string{inventory.Resource}, Verbs: []string{"get", "list", "watch"}}},
	}))
	require.NoError(t, mgmt.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "mcs-gitops-inventory"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "mcs-gitops-inventory"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "mcs-gitops", Name: "mcs-gitops"}},
	}))
	dir := t.TempDir()
	mgmtKC := filepath.Join(dir, "mgmt.kubeconfig")
	require.NoError(t, mgmt.WriteKubeconfigAs(mgmtKC, "system:serviceaccount:mcs-gitops:mcs-gitops",
		"system:serviceaccounts", "system:serviceaccounts:mcs-gitops", "system:authenticated"))

	joinProfile := func(m *envtest.Cluster, labels map[string]string) {
		t.Helper()
		var out bytes.Buffer
		_, err := join.Join(ctx, join.Options{Member: m.Name, Admin: m.Config, Management: mgmt.Client, Out: &out,
			ClusterProfile: true, ProfileNamespace: "fleet", AdmissionPolicy: join.PolicyNever})
		require.NoError(t, err, out.String())
		t.Logf("join %s:\n%s", m.Name, out.String())
		p := &unstructured.Unstructured{}
		p.SetGroupVersionKind(inventory.GroupVersionKind)
		require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "fleet", Name: m.Name}, p))
		l := p.GetLabels()
		for k, v := range labels {
			l[k] = v
		}
		p.SetLabels(l)
		require.NoError(t, mgmt.Client.Update(ctx, p))
	}
	joinProfile(members[0], map[string]string{"region": "eu"})
	joinProfile(members[1], map[string]string{"region": "us"})
	joinProfile(members[2], map[string]string{"region": "eu"})

	providers := fmt.Sprintf(`{"providers": [{"name": %q, "execConfig": {
  "apiVersion": "client.authentication.k8s.io/v1", "command": %q,
  "args": ["credential", "secret-token", "--namespace", "mcs-gitops", "--kubeconfig", %q],
  "provideClusterInfo": true}}]}`, join.ProfileProvider, binary, mgmtKC)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "providers.json"), []byte(providers), 0o644))
	config := filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(config, []byte(`apiVersion: mcs-gitops.io/v1alpha1
kind: ClusterSet
metadata: {name: inventory}
spec:
  inventory:
    namespace: fleet
    matchLabels: {x-k8s.io/cluster-manager: mcs-gitops}
    providerFile: providers.json
  reach:
    namespaces:
    - name: shop
      services:
      - name: cart
        importers: {matchLabels: {region: eu}}
  sync:
    memberTimeout: 3s
    staleAfter: 8s
    debounce: 50ms
    minCommitInterval: "0"
    resyncInterval: 3s
`), 0o644))
	remote := filepath.Join(dir, "remote.git")
	_, err := git.PlainInit(remote, true)
	require.NoError(t, err)

	// Exports before the start: cart in member 1 (reach: region eu only),
	// pay in member 2 (everyone).
	export(t, members[0], "shop", "cart", 80, "10.1.0.10")
	export(t, members[1], "shop", "pay", 80, "10.2.0.10")
	for _, m := range members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	}

	cmd := exec.Command(binary, "run", "--config", config, "--repo", remote, "--workdir", filepath.Join(dir, "work"),
		"--management-kubeconfig", mgmtKC, "--leader-elect=false", "--metrics-addr", "127.0.0.1:0", "--lineage-record", "")
	var logs syncBuffer
	cmd.Stderr = &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("mcs-gitops run:\n%s", logs.String())
		}
	})
	imported := func(m *envtest.Cluster, name string) bool {
		si := &mcsv1alpha1.ServiceImport{}
		return m.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, si) == nil && len(si.Spec.IPs) > 0
	}
	record := func() *layout.InventoryRecord {
		r, err := layout.ParseInventory([]byte(remoteFile(t, remote, layout.InventoryFile)))
		require.NoError(t, err)
		return r
	}
	names := func(r *layout.InventoryRecord) []string {
		var out []string
		if r != nil {
			for _, m := range r.Members {
				out = append(out, m.Name)
			}
		}
		return out
	}

	// Three members from three profiles; cart reaches the eu members only.
	eventually(t, 90*time.Second, func() bool { return imported(members[2], "cart") && imported(members[0], "pay") },
		"the inventory's members never imported")
	assert.Equal(t, []string{"cluster-2", "cluster-3", "cluster-4"}, names(record()))
	assert.False(t, imported(members[1], "cart"), "cart reaches region=eu profiles only")
	assert.Contains(t, remoteFile(t, remote, layout.InventoryFile), "region: eu")

	// A fourth profile joins: committed, then served.
	joinProfile(members[3], map[string]string{"region": "eu"})
	eventually(t, 60*time.Second, func() bool { return imported(members[3], "cart") && imported(members[3], "pay") },
		"the fourth profile's member was never served")
	assert.Equal(t, []string{"cluster-2", "cluster-3", "cluster-4", "cluster-5"}, names(record()))

	// Member 2's cluster manager says its control plane is unhealthy: it
	// is reported like an unreachable member, and after staleAfter its
	// export (pay) is dropped everywhere.
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(inventory.GroupVersionKind)
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "fleet", Name: members[1].Name}, p))
	require.NoError(t, unstructured.SetNestedSlice(p.Object, []any{map[string]any{
		"type": "ControlPlaneHealthy", "status": "False", "reason": "LeaseExpired", "message": "no heartbeat for 5m",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}, "status", "conditions"))
	require.NoError(t, mgmt.Client.Status().Update(ctx, p))
	eventually(t, 60*time.Second, func() bool {
		h := remoteFile(t, remote, layout.HealthFile)
		return strings.Contains(h, "reason: NotHealthy") && strings.Contains(h, "exportsDropped: true")
	}, "the unhealthy member's exports were never dropped")
	eventually(t, 30*time.Second, func() bool { return !imported(members[0], "pay") }, "pay was never withdrawn from member 1")
	assert.True(t, imported(members[2], "cart"), "the healthy members keep their imports")

	// The inventory is emptied at once: nothing is withdrawn and the
	// membership committed stays.
	before := remoteFile(t, remote, layout.InventoryFile)
	require.NoError(t, mgmt.Client.DeleteAllOf(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": inventory.Group + "/" + inventory.Version, "kind": inventory.Kind}}, client.InNamespace("fleet")))
	eventually(t, 30*time.Second, func() bool { return strings.Contains(logs.String(), "inventory lists no ClusterProfiles") },
		"the emptied inventory was never noticed")
	// Longer than staleAfter and a resync: a member taken for gone would
	// have been dropped by now.
	time.Sleep(12 * time.Second)
	assert.Equal(t, before, remoteFile(t, remote, layout.InventoryFile), "the membership committed stays")
	assert.True(t, imported(members[2], "cart"), "nothing withdrawn")
	assert.True(t, imported(members[3], "cart"), "nothing withdrawn")
	h := remoteFile(t, remote, layout.HealthFile)
	assert.NotContains(t, strings.ReplaceAll(h, "member: cluster-3\n  reachable: true", ""), "member: cluster-3\n  reachable: false")
	var sec corev1.Secret
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: join.TokenSecretName(members[0].Name)}, &sec))
	tok := string(sec.Data["token"])
	require.NotEmpty(t, tok)
	assert.NotContains(t, logs.String(), tok, "no credential in a log line")
	assert.NotContains(t, remoteFile(t, remote, layout.InventoryFile), tok)
}
