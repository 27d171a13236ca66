// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/member/doctor"
	"github.com/mcs-gitops/mcs-gitops/internal/member/join"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/dns"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// kubeadmCorefile is the Corefile kubeadm installs, before join --dns.
const kubeadmCorefile = `.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
    reload
}
`

// joined is a management cluster running deploy/base and members joined
// with `member join`: the loop and doctor reach each member only through
// the Secret join wrote, and read those Secrets only as mcs-gitops's
// ServiceAccount in the management cluster.
type joined struct {
	mgmt    *envtest.Cluster
	members []*envtest.Cluster
	config  string
	cfg     *v1alpha1.ClusterSet
	reader  client.Client // the management cluster as mcs-gitops's ServiceAccount
}

func newJoined(t *testing.T, n int) *joined {
	cs := envtest.Start(t, n+1)
	j := &joined{mgmt: cs[0], members: cs[1:]}
	ctx := context.Background()
	require.NoError(t, envtest.ServerSideApply(ctx, j.mgmt.Client, build(t, filepath.Join("..", "..", "deploy", "base")), false))
	dir := t.TempDir()
	kc := filepath.Join(dir, "mgmt.kubeconfig")
	require.NoError(t, j.mgmt.WriteKubeconfigAs(kc, "system:serviceaccount:mcs-gitops:mcs-gitops",
		"system:serviceaccounts", "system:serviceaccounts:mcs-gitops", "system:authenticated"))
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	require.NoError(t, err)
	j.reader, err = client.New(rc, client.Options{})
	require.NoError(t, err)

	var b strings.Builder
	b.WriteString("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: joined\nspec:\n  members:\n")
	for _, m := range j.members {
		require.NoError(t, m.Client.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"}, Data: map[string]string{"Corefile": kubeadmCorefile},
		}))
		var out bytes.Buffer
		_, err := join.Join(ctx, join.Options{Member: m.Name, Admin: m.Config, Management: j.mgmt.Client, DNS: &join.DefaultCoreDNS, Out: &out})
		require.NoError(t, err, out.String())
		b.WriteString(join.Entry(m.Name, "mcs-gitops", ""))
	}
	b.WriteString("  sync:\n    memberTimeout: 3s\n")
	j.config = filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(j.config, []byte(b.String()), 0o644))
	j.cfg, err = v1alpha1.LoadFile(j.config)
	require.NoError(t, err)
	return j
}

func (j *joined) doctor(t *testing.T, o doctor.Options) *doctor.Report {
	o.Config = j.cfg
	o.Members = clusters.Connect(context.Background(), j.cfg, clusters.ConnectOptions{Management: j.reader})
	r := doctor.Run(context.Background(), o)
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	t.Log("doctor:\n" + text.String())
	return r
}

func check(r *doctor.Report, member, name string) doctor.Check {
	for _, m := range r.Members {
		if m.Name == member {
			for _, c := range m.Checks {
				if c.Name == name {
					return c
				}
			}
		}
	}
	return doctor.Check{Name: name, Status: "absent"}
}

// TestJoinDoctorSync: members joined by `member join` are all green in
// doctor, an imported name resolves through a real CoreDNS running with
// the Corefile join wrote, and a sync works with nothing but the joined
// identities, read from the Secrets as mcs-gitops's own ServiceAccount.
func TestJoinDoctorSync(t *testing.T) {
	j := newJoined(t, 2)
	ctx := context.Background()
	c1, c2 := j.members[0], j.members[1]

	r := j.doctor(t, doctor.Options{})
	assert.Zero(t, r.Errors)
	assert.Zero(t, r.Warnings)
	for _, m := range r.Members {
		for _, c := range m.Checks {
			if c.Name != doctor.CheckDNSProbe {
				assert.Equal(t, doctor.OK, c.Status, "%s %s: %s", m.Name, c.Name, c.Message)
			}
		}
	}
	assert.Contains(t, check(r, c1.Name, doctor.CheckIdentity).Message, join.MemberUser)

	remote := filepath.Join(t.TempDir(), "remote.git")
	_, err := git.PlainInit(remote, true)
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	set := clusters.Connect(ctx, j.cfg, clusters.ConnectOptions{Management: j.reader})
	repo, err := gitsync.Open(ctx, gitsync.Options{URL: remote, Branch: "main", Workdir: filepath.Join(t.TempDir(), "clone"), Log: log,
		Author: gitsync.Signature{Name: "mcs-gitops", Email: "mcs-gitops@example.invalid"}})
	require.NoError(t, err)
	data, err := os.ReadFile(j.config)
	require.NoError(t, err)
	loop := &reconcile.Loop{Config: j.cfg, ConfigBytes: data, Members: set, Repo: repo, Log: log}
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	out, err := loop.Sync(ctx)
	require.NoError(t, err)
	assert.Empty(t, out.FailedMembers())
	si := &mcsv1alpha1.ServiceImport{}
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, si))
	require.NotEmpty(t, si.Spec.IPs)

	// CoreDNS with the Corefile join wrote answers the imported name, and
	// doctor's probe checks it against the import.
	var cm corev1.ConfigMap
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "coredns"}, &cm))
	require.Contains(t, cm.Data["Corefile"], "multicluster clusterset.local")
	addr := dns.Start(t, c2.Config, dns.ClusterSetZone)
	r = j.doctor(t, doctor.Options{Only: []string{c2.Name}, DNSProbe: true, DNSServers: map[string]string{c2.Name: addr}})
	probe := check(r, c2.Name, doctor.CheckDNSProbe)
	assert.Equal(t, doctor.OK, probe.Status, probe.Message)
	assert.Contains(t, probe.Message, "cart.shop.svc.clusterset.local")
	assert.Contains(t, probe.Message, si.Spec.IPs[0])
}

// TestDoctorSeesACRDStuckTerminating: a ServiceExport with a finalizer
// nobody removes holds its CRD in Terminating after a delete. Discovery
// still lists the kind (without the verbs that write), so doctor must not
// call it served: it names it and where the fix starts.
func TestDoctorSeesACRDStuckTerminating(t *testing.T) {
	j := newJoined(t, 1)
	ctx := context.Background()
	m := j.members[0]
	require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	held := &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", Finalizers: []string{"example.com/hold"}}}
	require.NoError(t, m.Client.Create(ctx, held))
	require.NoError(t, m.Client.Delete(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "serviceexports.multicluster.x-k8s.io"}}))

	var crds doctor.Check
	eventually(t, time.Minute, func() bool {
		crds = check(j.doctor(t, doctor.Options{Only: []string{m.Name}}), m.Name, doctor.CheckCRDs)
		return crds.Status != doctor.OK
	}, "doctor still finds the CRDs served")
	assert.Equal(t, doctor.Error, crds.Status)
	assert.Equal(t, "being deleted (its CRD is Terminating): serviceexports (multicluster.x-k8s.io/v1alpha1)", crds.Message)
	assert.Contains(t, crds.Fix, "finalizers")
	assert.Contains(t, crds.Fix, "mcs-gitops member join "+m.Name)
}

// TestDoctorFindsEachFault seeds the faults of a first day, one per
// member check, and doctor names each with its fix.
func TestDoctorFindsEachFault(t *testing.T) {
	j := newJoined(t, 1)
	ctx := context.Background()
	m := j.members[0]

	// No multicluster plugin: the Corefile as kubeadm wrote it.
	var cm corev1.ConfigMap
	require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "coredns"}, &cm))
	cm.Data["Corefile"] = kubeadmCorefile
	require.NoError(t, m.Client.Update(ctx, &cm))
	// A verb missing: a role from before prune.
	var role rbacv1.ClusterRole
	require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Name: "mcs-gitops-member"}, &role))
	for i, rule := range role.Rules {
		if len(rule.Resources) == 1 && rule.Resources[0] == "services" {
			role.Rules[i].Verbs = []string{"get", "list", "watch", "create", "patch"}
		}
	}
	require.NoError(t, m.Client.Update(ctx, &role))
	// A CRD missing, and the optional one. Deleted only once their
	// objects can be listed: a CRD deleted while the apiserver is still
	// initializing its storage fails the finalizer's listing ("storage is
	// (re)initializing") and, on a loaded machine, stayed Terminating for
	// minutes.
	eventually(t, time.Minute, func() bool {
		return m.Client.List(ctx, &mcsv1alpha1.ServiceExportList{}) == nil && m.Client.List(ctx, &v1alpha1.GlobalTrafficPolicyList{}) == nil
	}, "the CRDs' storage never became ready")
	for _, name := range []string{"serviceexports.multicluster.x-k8s.io", "globaltrafficpolicies.mcs-gitops.io"} {
		require.NoError(t, m.Client.Delete(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	}
	// The apiserver's CRD finalizer usually lets go in about 0.1 s, but it
	// polls instances every 5 s for up to a minute and backs off on
	// conflicts; a loaded CI machine once needed more than 30 s.
	var stuck apiextensionsv1.CustomResourceDefinition
	deadline := time.Now().Add(2 * time.Minute)
	for exists(m.Client, &stuck, "", "serviceexports.multicluster.x-k8s.io") {
		if time.Now().After(deadline) {
			t.Fatalf("CRD not deleted after 2m: finalizers %v, conditions %+v", stuck.Finalizers, stuck.Status.Conditions)
		}
		time.Sleep(10 * time.Millisecond)
	}

	r := j.doctor(t, doctor.Options{})
	crds := check(r, m.Name, doctor.CheckCRDs)
	assert.Equal(t, doctor.Error, crds.Status)
	assert.Contains(t, crds.Message, "serviceexports (multicluster.x-k8s.io/v1alpha1)")
	assert.Contains(t, crds.Fix, "mcs-gitops member join "+m.Name)
	perms := check(r, m.Name, doctor.CheckPermissions)
	assert.Equal(t, doctor.Error, perms.Status)
	assert.Equal(t, "may not delete services", perms.Message)
	assert.Contains(t, perms.Fix, "mcs-gitops member join "+m.Name)
	dnsCheck := check(r, m.Name, doctor.CheckCoreDNS)
	assert.Equal(t, doctor.Error, dnsCheck.Status)
	assert.Contains(t, dnsCheck.Fix, "--dns")
	assert.Equal(t, 3, r.Errors)

	// Each fix works: join again, and doctor is green.
	var out bytes.Buffer
	_, err := join.Join(ctx, join.Options{Member: m.Name, Admin: m.Config, Management: j.mgmt.Client, DNS: &join.DefaultCoreDNS, Out: &out})
	require.NoError(t, err, out.String())
	r = j.doctor(t, doctor.Options{})
	assert.Zero(t, r.Errors)
	assert.Zero(t, r.Warnings)

	// An administrator kubeconfig works, and is more than it needs.
	admin := filepath.Join(t.TempDir(), "admin.kubeconfig")
	require.NoError(t, m.WriteKubeconfig(admin))
	cfg, err := v1alpha1.LoadFile(j.config)
	require.NoError(t, err)
	cfg.Spec.Members[0].Kubeconfig = v1alpha1.KubeconfigRef{Path: admin}
	r = doctor.Run(ctx, doctor.Options{Config: cfg, Members: clusters.Connect(ctx, cfg, clusters.ConnectOptions{})})
	perms = check(r, m.Name, doctor.CheckPermissions)
	assert.Equal(t, doctor.Warning, perms.Status)
	assert.Contains(t, perms.Message, "more than it needs: * *.*, get secrets")

	// A revoked identity: its ServiceAccount deleted.
	require.NoError(t, m.Client.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "mcs-gitops"}}))
	eventually(t, 30*time.Second, func() bool {
		return check(j.doctor(t, doctor.Options{}), m.Name, doctor.CheckIdentity).Status == doctor.Error
	}, "doctor did not notice the revoked identity")
	r = j.doctor(t, doctor.Options{})
	id := check(r, m.Name, doctor.CheckIdentity)
	assert.Contains(t, id.Message, "rejects the credential")
	assert.Contains(t, id.Fix, "--rotate")
	assert.Equal(t, doctor.Skipped, check(r, m.Name, doctor.CheckPermissions).Status)
}
