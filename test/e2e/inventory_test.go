// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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

// remoteFile is path in the newest commit of branch main of the bare
// repository remote, "" when absent.
func remoteFile(t testing.TB, remote, path string) string {
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

// remoteLog is every commit message of branch main of remote, newest
// first, in one string.
func remoteLog(t testing.TB, remote string) string {
	t.Helper()
	r, err := git.PlainOpen(remote)
	require.NoError(t, err)
	ref, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	require.NoError(t, err)
	it, err := r.Log(&git.LogOptions{From: ref.Hash()})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, it.ForEach(func(c *object.Commit) error {
		b.WriteString(c.Message + "\n")
		return nil
	}))
	return b.String()
}

// inventoryFleet is a management cluster with deploy/base, an inventory
// namespace "fleet" that mcs-gitops's ServiceAccount may read (what
// docs/inventory.md tells a platform team to grant), member clusters to
// join into it, and the mcs-gitops binary, run as that ServiceAccount
// with the provider file that maps the "secretreader" access provider to
// `mcs-gitops credential secret-token`.
type inventoryFleet struct {
	t       testing.TB
	binary  string
	mgmt    *envtest.Cluster
	members []*envtest.Cluster
	dir     string
	mgmtKC  string
	config  string
	remote  string
}

func newInventoryFleet(t testing.TB, members int, spec string) *inventoryFleet {
	f := &inventoryFleet{t: t, binary: buildBinary(t), dir: t.TempDir()}
	cs := envtest.Start(t, members+1)
	f.mgmt, f.members = cs[0], cs[1:]
	ctx := context.Background()
	require.NoError(t, envtest.ServerSideApply(ctx, f.mgmt.Client, build(t, filepath.Join("..", "..", "deploy", "base")), false))
	require.NoError(t, envtest.EnsureNamespaces(ctx, f.mgmt.Client, "fleet"))
	require.NoError(t, f.mgmt.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "mcs-gitops-inventory"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{inventory.Group}, Resources: []string{inventory.Resource}, Verbs: []string{"get", "list", "watch"}}},
	}))
	require.NoError(t, f.mgmt.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "mcs-gitops-inventory"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "mcs-gitops-inventory"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "mcs-gitops", Name: "mcs-gitops"}},
	}))
	f.mgmtKC = filepath.Join(f.dir, "mgmt.kubeconfig")
	require.NoError(t, f.mgmt.WriteKubeconfigAs(f.mgmtKC, "system:serviceaccount:mcs-gitops:mcs-gitops",
		"system:serviceaccounts", "system:serviceaccounts:mcs-gitops", "system:authenticated"))
	providers := fmt.Sprintf(`{"providers": [{"name": %q, "execConfig": {
  "apiVersion": "client.authentication.k8s.io/v1", "command": %q,
  "args": ["credential", "secret-token", "--namespace", "mcs-gitops", "--kubeconfig", %q],
  "provideClusterInfo": true}}]}`, join.ProfileProvider, f.binary, f.mgmtKC)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "providers.json"), []byte(providers), 0o644))
	f.config = filepath.Join(f.dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(f.config, []byte(`apiVersion: mcs-gitops.io/v1alpha1
kind: ClusterSet
metadata: {name: inventory}
spec:
  inventory:
    namespace: fleet
    matchLabels: {x-k8s.io/cluster-manager: mcs-gitops}
    providerFile: providers.json
`+spec), 0o644))
	f.remote = filepath.Join(f.dir, "remote.git")
	_, err := git.PlainInit(f.remote, true)
	require.NoError(t, err)
	return f
}

// join registers m with `member join --cluster-profile` and gives its
// profile labels, as a cluster manager would.
func (f *inventoryFleet) join(m *envtest.Cluster, labels map[string]string) {
	f.t.Helper()
	var out bytes.Buffer
	_, err := join.Join(context.Background(), join.Options{Member: m.Name, Admin: m.Config, Management: f.mgmt.Client, Out: &out,
		ClusterProfile: true, ProfileNamespace: "fleet", AdmissionPolicy: join.PolicyNever})
	require.NoError(f.t, err, out.String())
	f.label(m, labels)
}

// label sets labels on m's profile.
func (f *inventoryFleet) label(m *envtest.Cluster, labels map[string]string) {
	f.t.Helper()
	p := f.profile(m)
	l := p.GetLabels()
	for k, v := range labels {
		l[k] = v
	}
	p.SetLabels(l)
	require.NoError(f.t, f.mgmt.Client.Update(context.Background(), p))
}

func (f *inventoryFleet) profile(m *envtest.Cluster) *unstructured.Unstructured {
	f.t.Helper()
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(inventory.GroupVersionKind)
	require.NoError(f.t, f.mgmt.Client.Get(context.Background(), client.ObjectKey{Namespace: "fleet", Name: m.Name}, p))
	return p
}

// command is the mcs-gitops command verb against the fleet, as its
// ServiceAccount.
func (f *inventoryFleet) command(verb string, args ...string) *exec.Cmd {
	return exec.Command(f.binary, append([]string{verb, "--config", f.config, "--repo", f.remote, "--workdir", filepath.Join(f.dir, "work"),
		"--management-kubeconfig", f.mgmtKC, "--lineage-record", ""}, args...)...)
}

// run starts `mcs-gitops run`, stopped when the test ends; its log is
// kept, and printed when the test failed.
func (f *inventoryFleet) run() (*exec.Cmd, *envtest.TailBuffer) {
	cmd := f.command("run", "--leader-elect=false", "--metrics-addr", "127.0.0.1:0")
	// Whole: a test reads the first lines (the metrics address) too.
	logs := &envtest.TailBuffer{Limit: 64 << 20}
	cmd.Stderr = logs
	require.NoError(f.t, cmd.Start())
	f.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if f.t.Failed() {
			f.t.Logf("mcs-gitops run:\n%s", logs.String())
		}
	})
	return cmd, logs
}

func (f *inventoryFleet) record() *layout.InventoryRecord {
	r, err := layout.ParseInventory([]byte(remoteFile(f.t, f.remote, layout.InventoryFile)))
	require.NoError(f.t, err)
	return r
}

func recordNames(r *layout.InventoryRecord) []string {
	var out []string
	if r != nil {
		for _, m := range r.Members {
			out = append(out, m.Name)
		}
	}
	return out
}

// importedIPs: m holds a ServiceImport shop/name with its IPs.
func importedIPs(m *envtest.Cluster, name string) bool {
	si := &mcsv1alpha1.ServiceImport{}
	return m.Client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: name}, si) == nil && len(si.Spec.IPs) > 0
}

// TestMembersFromTheClusterInventory: the members of a ClusterSet come
// from ClusterProfiles that `member join --cluster-profile` registered;
// mcs-gitops, run as its own ServiceAccount, gets every member's
// credential from an exec plugin (its own binary, `credential
// secret-token`, reading the token Secret in the management cluster).
// A fourth profile joins and is committed and served; the reach policy
// selects members by profile labels; a profile that says the control
// plane is unhealthy is reported, and its exports dropped after
// staleAfter; an emptied inventory withdraws nothing, in a running loop
// and at a cold start.
func TestMembersFromTheClusterInventory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcs-gitops and runs it against five apiservers")
	}
	f := newInventoryFleet(t, 4, `  reach:
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
`)
	ctx := context.Background()
	members := f.members
	f.join(members[0], map[string]string{"region": "eu"})
	f.join(members[1], map[string]string{"region": "us"})
	f.join(members[2], map[string]string{"region": "eu"})
	// Exports before the start: cart in member 1 (reach: region eu only),
	// pay in member 2 (everyone).
	export(t, members[0], "shop", "cart", 80, "10.1.0.10")
	export(t, members[1], "shop", "pay", 80, "10.2.0.10")
	for _, m := range members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	}
	cmd, logs := f.run()

	// Three members from three profiles; cart reaches the eu members only.
	eventually(t, 90*time.Second, func() bool { return importedIPs(members[2], "cart") && importedIPs(members[0], "pay") },
		"the inventory's members never imported")
	assert.Equal(t, []string{"cluster-2", "cluster-3", "cluster-4"}, recordNames(f.record()))
	assert.False(t, importedIPs(members[1], "cart"), "cart reaches region=eu profiles only")
	assert.Contains(t, remoteFile(t, f.remote, layout.InventoryFile), "region: eu")

	// A fourth profile joins: committed, then served.
	f.join(members[3], map[string]string{"region": "eu"})
	eventually(t, 60*time.Second, func() bool { return importedIPs(members[3], "cart") && importedIPs(members[3], "pay") },
		"the fourth profile's member was never served")
	assert.Equal(t, []string{"cluster-2", "cluster-3", "cluster-4", "cluster-5"}, recordNames(f.record()))
	assert.Contains(t, remoteLog(t, f.remote), "cluster-5 joins the ClusterSet", "the commit says who joined")

	// doctor checks the inventory's members like hand-written ones,
	// through the same exec plugin.
	doc, err := exec.Command(f.binary, "doctor", "--config", f.config, "--management-kubeconfig", f.mgmtKC).CombinedOutput()
	require.NoError(t, err, "%s", doc)
	assert.Contains(t, string(doc), "inventory: 4 member(s) from ClusterProfiles in namespace fleet")
	for _, m := range members {
		assert.Contains(t, string(doc), m.Name)
	}

	// Member 2's cluster manager says its control plane is unhealthy: it
	// is reported like an unreachable member, and after staleAfter its
	// export (pay) is dropped everywhere.
	p := f.profile(members[1])
	require.NoError(t, unstructured.SetNestedSlice(p.Object, []any{map[string]any{
		"type": "ControlPlaneHealthy", "status": "False", "reason": "LeaseExpired", "message": "no heartbeat for 5m",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}, "status", "conditions"))
	require.NoError(t, f.mgmt.Client.Status().Update(ctx, p))
	eventually(t, 60*time.Second, func() bool {
		h := remoteFile(t, f.remote, layout.HealthFile)
		return strings.Contains(h, "reason: NotHealthy") && strings.Contains(h, "exportsDropped: true")
	}, "the unhealthy member's exports were never dropped")
	eventually(t, 30*time.Second, func() bool { return !importedIPs(members[0], "pay") }, "pay was never withdrawn from member 1")
	assert.True(t, importedIPs(members[2], "cart"), "the healthy members keep their imports")

	// The inventory is emptied at once: nothing is withdrawn and the
	// membership committed stays.
	before := remoteFile(t, f.remote, layout.InventoryFile)
	require.NoError(t, f.mgmt.Client.DeleteAllOf(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": inventory.Group + "/" + inventory.Version, "kind": inventory.Kind}}, client.InNamespace("fleet")))
	eventually(t, 30*time.Second, func() bool { return strings.Contains(logs.String(), "inventory lists no ClusterProfiles") },
		"the emptied inventory was never noticed")
	addr := regexp.MustCompile(`msg="serving metrics and probes" addr=(\S+)`).FindStringSubmatch(logs.String())
	require.Len(t, addr, 2)
	_, metrics := httpGet(t, "http://"+addr[1]+"/metrics")
	assert.Contains(t, metrics, "\nmcs_gitops_inventory_held 1\n")
	assert.Contains(t, metrics, "\nmcs_gitops_inventory_members 4\n")
	// Longer than staleAfter and a resync: a member taken for gone would
	// have been dropped by now.
	time.Sleep(12 * time.Second)
	assert.Equal(t, before, remoteFile(t, f.remote, layout.InventoryFile), "the membership committed stays")
	assert.True(t, importedIPs(members[2], "cart"), "nothing withdrawn")
	assert.True(t, importedIPs(members[3], "cart"), "nothing withdrawn")
	h := remoteFile(t, f.remote, layout.HealthFile)
	for _, m := range []string{"cluster-2", "cluster-4", "cluster-5"} {
		assert.Contains(t, h, "member: "+m+"\n  reachable: true", "read with the credentials last built")
	}

	// A cold start while the inventory is empty: the membership committed
	// stands (held) and what the members imported stays rendered; the
	// members whose profiles are gone cannot be read, like members down.
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	_ = cmd.Wait()
	out, err := f.command("sync").CombinedOutput()
	require.Error(t, err, "the members cannot be read: a partial cycle")
	rec := f.record()
	assert.Equal(t, []string{"cluster-2", "cluster-3", "cluster-4", "cluster-5"}, recordNames(rec), "%s", out)
	assert.Contains(t, rec.Held, "lists no ClusterProfile where the last commit had 4 members")
	assert.NotEmpty(t, remoteFile(t, f.remote, "clusters/cluster-4/shop/cart/serviceimport.yaml"), "nothing withdrawn from the render")
	assert.Contains(t, string(out), "inventory lists no ClusterProfiles; holding the members committed")

	var sec corev1.Secret
	require.NoError(t, f.mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: join.TokenSecretName(members[0].Name)}, &sec))
	tok := string(sec.Data["token"])
	require.NotEmpty(t, tok)
	assert.NotContains(t, logs.String(), tok, "no credential in a log line")
	assert.NotContains(t, string(out), tok, "no credential in a log line")
	assert.NotContains(t, remoteFile(t, f.remote, layout.InventoryFile), tok)
}
