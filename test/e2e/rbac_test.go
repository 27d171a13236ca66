// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// memberUser is the identity deploy/member-rbac binds: the ServiceAccount
// kube-system/mcs-gitops, as the apiserver sees its token.
const memberUser = "system:serviceaccount:kube-system:mcs-gitops"

// grantMemberRole applies the kustomizations under deploy/ given (relative
// to deploy/member-rbac) to c as its administrator.
func grantMemberRole(t *testing.T, c *envtest.Cluster, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		objs := build(t, filepath.Join("..", "..", "deploy", "member-rbac", d))
		require.NoError(t, envtest.ServerSideApply(context.Background(), c.Client, objs, false))
	}
}

// TestSyncRunsWithOnlyTheMemberRole: every cycle step (read, apply, prune,
// status, a created Namespace) works with exactly the rights
// deploy/member-rbac grants and under its admission policy, so the role is
// known to be enough and the policy to let every rendered shape through;
// the same credential used directly for anything else is refused.
func TestSyncRunsWithOnlyTheMemberRole(t *testing.T) {
	w := newWorld(t, 2, "  render:\n    createMissingNamespaces: true\n")
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	for _, m := range w.members {
		grantMemberRole(t, m, ".", "create-namespaces", "admission-policy")
		require.NoError(t, m.WriteKubeconfigAs(filepath.Join(w.dir, m.Name+".kubeconfig"), memberUser,
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"))
	}
	w.loop = w.newLoop(filepath.Join(t.TempDir(), "clone"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	// First, so that every cycle below runs under the enforced policy too.
	attackWithMemberCredential(t, c2, filepath.Join(w.dir, c2.Name+".kubeconfig"))

	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	export(t, c1, "pay", "ledger", 5432, "10.1.0.11") // cluster-2 has no namespace pay
	out := w.sync()
	assert.Empty(t, out.FailedMembers())

	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"))
	assert.True(t, exists(c2.Client, &corev1.Service{}, "shop", render.DerivedServiceName("shop", "cart")))
	assert.True(t, exists(c2.Client, &corev1.Namespace{}, "", "pay"), "created with the create-namespaces role")
	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "pay", "ledger"))
	assertExportConditions(t, c1, "shop", "cart", map[string]string{"Valid": "True", "Conflict": "False"})
	si := &mcsv1alpha1.ServiceImport{}
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, si))
	assert.NotEmpty(t, si.Spec.IPs, "spec.ips written")
	assert.NotEmpty(t, si.Status.Clusters, "status written")

	unexport(t, c1, "shop", "cart")
	out = w.sync()
	assert.Empty(t, out.FailedMembers())
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "pruned")
}

// attackWithMemberCredential uses mcs-gitops's member credential directly,
// as whoever stole it would: RBAC allows each of these requests, and the
// admission policy of deploy/member-rbac/admission-policy refuses them.
func attackWithMemberCredential(t *testing.T, c *envtest.Cluster, kubeconfig string) {
	ctx := context.Background()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	stolen, err := client.New(rc, client.Options{Scheme: envtest.Scheme()})
	require.NoError(t, err)

	user := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: "shop"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "checkout"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	require.NoError(t, c.Client.Create(ctx, user))
	// A policy takes a moment to be loaded after it is created.
	eventually(t, 30*time.Second, func() bool {
		err := stolen.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "shop"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "managed-by=mcs-gitops")
	}, "the admission policy is not enforced")
	managed := map[string]string{render.ManagedByLabel: render.ManagedByValue}
	sliceLabels := map[string]string{render.ManagedByLabel: render.ManagedByValue,
		discoveryv1.LabelManagedBy: render.EndpointSliceManager, discoveryv1.LabelServiceName: "kubernetes"}
	for _, a := range []struct {
		name string
		do   func() error
		want string
	}{
		{"a Service with externalIPs", func() error {
			return stolen.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "derived-evil", Namespace: "shop", Labels: managed},
				Spec: corev1.ServiceSpec{ExternalIPs: []string{"8.8.8.8"}, Ports: []corev1.ServicePort{{Port: 53}}}})
		}, "without external IPs or node ports"},
		{"a NodePort Service", func() error {
			return stolen.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "derived-np", Namespace: "shop", Labels: managed},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}})
		}, "without external IPs or node ports"},
		{"a Service without the managed-by label", func() error {
			return stolen.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "shop"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"deleting a user's Service", func() error { return stolen.Delete(ctx, user.DeepCopy()) }, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"a slice for the kubernetes Service", func() error {
			return stolen.Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes-evil", Namespace: "default", Labels: sliceLabels},
				AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.9.9.9"}}}})
		}, "for the Services it derives"},
		{"a privileged Namespace", func() error {
			return stolen.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "evil",
				Labels: map[string]string{render.ManagedByLabel: render.ManagedByValue, "pod-security.kubernetes.io/enforce": "privileged"}}})
		}, "without labels or annotations of its own choosing"},
	} {
		err := a.do()
		require.Error(t, err, a.name)
		assert.Contains(t, err.Error(), a.want, a.name)
	}
	assert.True(t, exists(c.Client, &corev1.Service{}, "shop", "checkout"), "the user's Service is still there")
}

// TestGatewayListenersWithOnlyTheMemberRole: with tcpListeners: Gateway,
// the member role merges mcs-gitops's listeners into the user's Gateway
// and takes them out again, under the admission policy; the same
// credential used directly can change nothing else of the Gateway, nor
// create or delete one.
func TestGatewayListenersWithOnlyTheMemberRole(t *testing.T) {
	w := newWorldWith(t, 2, func(i int) string {
		if i != 0 {
			return ""
		}
		return gatewayMember(i) + "      tcpListeners: Gateway\n"
	}, "")
	ctx := context.Background()
	c1 := w.member("cluster-1")
	for _, m := range w.members {
		grantMemberRole(t, m, ".", "admission-policy")
		require.NoError(t, m.WriteKubeconfigAs(filepath.Join(w.dir, m.Name+".kubeconfig"), memberUser,
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"))
	}
	w.loop = w.newLoop(filepath.Join(t.TempDir(), "clone"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, c1.Client, "mcs-gateway", "db"))
	require.NoError(t, c1.Client.Create(ctx, usersGateway()))
	attackGatewayWithMemberCredential(t, c1, filepath.Join(w.dir, c1.Name+".kubeconfig"))

	svc := tenant.Service("db", "pg", tenant.Port("pg", 5432, 5432))
	tenant.Create(t, c1.Client, svc, tenant.Slice(svc, "pg-cluster-1", discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.20")...), tenant.Export("db", "pg"))
	out := w.sync()
	assert.Empty(t, out.FailedMembers())
	gw := memberGateway(t, c1)
	assert.Equal(t, []string{"http", "mcs-tcp-30000"}, envtest.ListenerNames(gw))
	assert.Equal(t, "users-class", gw.Object["spec"].(map[string]any)["gatewayClassName"])

	unexport(t, c1, "db", "pg")
	out = w.sync()
	assert.Empty(t, out.FailedMembers())
	assert.Equal(t, []string{"http"}, envtest.ListenerNames(memberGateway(t, c1)), "our listener released, the user's kept")
}

// usersGateway is the east-west Gateway a user makes, as
// docs/gateway-mode.md asks.
func usersGateway() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"namespace": "mcs-gateway", "name": "east-west"},
		"spec": map[string]any{"gatewayClassName": "users-class", "listeners": []any{map[string]any{
			"name": "http", "protocol": "HTTP", "port": int64(80), "allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
		}}},
	}}
}

func memberGateway(t *testing.T, c *envtest.Cluster) *unstructured.Unstructured {
	t.Helper()
	gw := usersGateway()
	require.NoError(t, c.Client.Get(context.Background(), client.ObjectKeyFromObject(gw), gw))
	return gw
}

// attackGatewayWithMemberCredential uses mcs-gitops's member credential
// on the user's Gateway as whoever stole it would: RBAC allows patching
// it, and the admission policy refuses everything but mcs-gitops's own
// listeners; creating or deleting one RBAC already refuses.
func attackGatewayWithMemberCredential(t *testing.T, c *envtest.Cluster, kubeconfig string) {
	ctx := context.Background()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	stolen, err := client.New(rc, client.Options{Scheme: envtest.Scheme()})
	require.NoError(t, err)
	apply := func(spec, labels map[string]any, opts ...client.ApplyOption) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"namespace": "mcs-gateway", "name": "east-west"},
		}}
		if spec != nil {
			u.Object["spec"] = spec
		}
		if labels != nil {
			u.Object["metadata"].(map[string]any)["labels"] = labels
		}
		opts = append(opts, client.FieldOwner("mcs-gitops"), client.ForceOwnership)
		return stolen.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...)
	}
	tcp := func(name string, port int64, from string) map[string]any {
		l := map[string]any{"name": name, "protocol": "TCP", "port": port,
			"allowedRoutes": map[string]any{"kinds": []any{map[string]any{"kind": "TCPRoute"}}, "namespaces": map[string]any{"from": from}}}
		if from == "Selector" {
			l["allowedRoutes"].(map[string]any)["namespaces"].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "db"}}
		}
		return l
	}
	// A policy takes a moment to be loaded after it is created.
	eventually(t, 30*time.Second, func() bool {
		err := apply(map[string]any{"gatewayClassName": "evil"}, nil, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "its own TCP listeners")
	}, "the admission policy is not enforced on Gateways")
	for _, a := range []struct {
		name string
		do   func() error
		want string
	}{
		{"taking over the user's listener", func() error {
			return apply(map[string]any{"listeners": []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(80)}}}, nil)
		}, "its own TCP listeners"},
		{"a listener of another name", func() error {
			return apply(map[string]any{"listeners": []any{tcp("ssh", 2222, "Selector")}}, nil)
		}, "its own TCP listeners"},
		{"our listener open to every namespace", func() error {
			return apply(map[string]any{"listeners": []any{tcp("mcs-tcp-30001", 30001, "All")}}, nil)
		}, "its own TCP listeners"},
		{"our listener on a port its name does not say", func() error {
			return apply(map[string]any{"listeners": []any{tcp("mcs-tcp-30001", 22, "Selector")}}, nil)
		}, "its own TCP listeners"},
		{"a label on the Gateway", func() error { return apply(nil, map[string]any{"app.kubernetes.io/managed-by": "mcs-gitops"}) }, "its own TCP listeners"},
		{"addresses", func() error {
			return apply(map[string]any{"addresses": []any{map[string]any{"type": "IPAddress", "value": "8.8.8.8"}}}, nil)
		}, "its own TCP listeners"},
		{"deleting the Gateway", func() error { return stolen.Delete(ctx, usersGateway()) }, "forbidden"},
		{"creating a Gateway", func() error {
			gw := usersGateway()
			gw.SetName("evil")
			return stolen.Create(ctx, gw)
		}, "forbidden"},
	} {
		err := a.do()
		require.Error(t, err, a.name)
		assert.Contains(t, err.Error(), a.want, a.name)
	}
	// What mcs-gitops does itself goes through.
	require.NoError(t, apply(map[string]any{"listeners": []any{tcp("mcs-tcp-30005", 30005, "Selector")}}, nil))
	require.NoError(t, apply(nil, nil), "releasing it")
	gw := memberGateway(t, c)
	assert.Equal(t, []string{"http"}, envtest.ListenerNames(gw))
	assert.Equal(t, "users-class", gw.Object["spec"].(map[string]any)["gatewayClassName"])
}

// TestMemberRoleBeforeTCPListenersStillSyncs: a member whose role was
// granted before mcs-gitops could write Gateways (no rule for gateways)
// keeps syncing its ListenerSets after the upgrade; only tcpListeners:
// Gateway needs the new rule.
func TestMemberRoleBeforeTCPListenersStillSyncs(t *testing.T) {
	w := newWorldWith(t, 2, func(i int) string {
		if i != 0 {
			return ""
		}
		return gatewayMember(i)
	}, "")
	ctx := context.Background()
	c1 := w.member("cluster-1")
	for _, m := range w.members {
		grantMemberRole(t, m, ".", "admission-policy")
		role := &rbacv1.ClusterRole{}
		require.NoError(t, m.Client.Get(ctx, client.ObjectKey{Name: "mcs-gitops-member"}, role))
		role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "gateways") })
		require.NoError(t, m.Client.Update(ctx, role))
		require.NoError(t, m.WriteKubeconfigAs(filepath.Join(w.dir, m.Name+".kubeconfig"), memberUser,
			"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"))
	}
	w.loop = w.newLoop(filepath.Join(t.TempDir(), "clone"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, c1.Client, "mcs-gateway", "db"))
	require.NoError(t, c1.Client.Create(ctx, usersGateway()))
	svc := tenant.Service("db", "pg", tenant.Port("pg", 5432, 5432))
	tenant.Create(t, c1.Client, svc, tenant.Slice(svc, "pg-cluster-1", discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.20")...), tenant.Export("db", "pg"))
	out := w.sync()
	assert.Empty(t, out.FailedMembers())
	ls := &unstructured.Unstructured{}
	ls.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "ListenerSet"})
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "db", Name: "pg-clusterset"}, ls))
	unexport(t, c1, "db", "pg")
	out = w.sync()
	assert.Empty(t, out.FailedMembers())
}

// TestMemberPolicyFencesKubeDNS: with deploy/member-rbac and its admission
// policy in a member, mcs-gitops's identity, which RBAC lets patch and
// delete any Service and EndpointSlice, can neither change, take over nor
// delete the cluster's DNS Service kube-system/kube-dns, nor give it
// endpoints of its own. An administrator's identical requests go
// through, so each refusal is the policy's.
func TestMemberPolicyFencesKubeDNS(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := context.Background()
	grantMemberRole(t, c, ".", "admission-policy")
	// The member role has no update verb (apply is patch), so a PUT would
	// stop at RBAC. Grant it here, as another role in a member might, so
	// that the PUT below reaches the policy too.
	require.NoError(t, c.Client.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "also-update"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "discovery.k8s.io"}, Resources: []string{"services", "endpointslices"}, Verbs: []string{"update"}}}}))
	require.NoError(t, c.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "also-update"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "also-update"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "mcs-gitops"}}}))
	kubeconfig := filepath.Join(t.TempDir(), "member.kubeconfig")
	require.NoError(t, c.WriteKubeconfigAs(kubeconfig, memberUser,
		"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"))
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	stolen, err := client.New(rc, client.Options{Scheme: envtest.Scheme()})
	require.NoError(t, err)

	// kube-dns as kubeadm creates it, and its slice as the endpointslice
	// controller writes it.
	dnsLabels := map[string]string{"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}
	dns := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns", Labels: dnsLabels},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"k8s-app": "kube-dns"}, Ports: []corev1.ServicePort{
			{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}, {Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53}}}}
	require.NoError(t, c.Client.Create(ctx, dns))
	dnsSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns-x7k2p",
		Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.10"}, Conditions: discoveryv1.EndpointConditions{Ready: new(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: new("dns"), Protocol: new(corev1.ProtocolUDP), Port: new(int32(53))}}}
	require.NoError(t, c.Client.Create(ctx, dnsSlice))

	const refused = "ValidatingAdmissionPolicy 'mcs-gitops-member' with binding 'mcs-gitops-member' denied request"
	// A policy takes a moment to be loaded after it is created.
	eventually(t, 30*time.Second, func() bool {
		err := stolen.Delete(ctx, dns.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), refused)
	}, "the admission policy is not enforced")

	ours := map[string]string{render.ManagedByLabel: render.ManagedByValue}
	mergePatch := func(cl client.Client, obj client.Object, patch string, opts ...client.PatchOption) error {
		return cl.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)), opts...)
	}
	for _, r := range []struct {
		name string
		// do sends the request as cl; dryRun is set for the administrator,
		// so that every request meets the same kube-dns.
		do   func(cl client.Client, dryRun []string) error
		want string
	}{
		{"patch kube-dns to select other pods", func(cl client.Client, dryRun []string) error {
			return mergePatch(cl, dns.DeepCopy(), `{"spec":{"selector":{"k8s-app":"evil-dns"}}}`, &client.PatchOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"patch external IPs onto kube-dns", func(cl client.Client, dryRun []string) error {
			return mergePatch(cl, dns.DeepCopy(), `{"spec":{"externalIPs":["192.0.2.53"]}}`, &client.PatchOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		// A Service mcs-gitops renders: labelled as its own, selectorless.
		// Labelling kube-dns so must not make it mcs-gitops's.
		{"take kube-dns over: label it as mcs-gitops's and drop its selector", func(cl client.Client, dryRun []string) error {
			return mergePatch(cl, dns.DeepCopy(), `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"mcs-gitops"}},"spec":{"selector":null}}`,
				&client.PatchOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"server-side apply over kube-dns, as the applier would", func(cl client.Client, dryRun []string) error {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]any{"namespace": "kube-system", "name": "kube-dns", "labels": map[string]any{render.ManagedByLabel: render.ManagedByValue}},
				"spec":     map[string]any{"ports": []any{map[string]any{"name": "dns", "protocol": "UDP", "port": int64(53)}}}}}
			return cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), &client.ApplyOptions{FieldManager: "mcs-gitops", Force: new(true), DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"update (PUT) kube-dns", func(cl client.Client, dryRun []string) error {
			cur := &corev1.Service{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(dns), cur); err != nil {
				return err
			}
			cur.Labels = ours
			cur.Spec.Selector = nil
			return cl.Update(ctx, cur, &client.UpdateOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"delete kube-dns", func(cl client.Client, dryRun []string) error {
			return cl.Delete(ctx, dns.DeepCopy(), &client.DeleteOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"a slice for kube-dns, labelled as mcs-gitops's", func(cl client.Client, dryRun []string) error {
			return cl.Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns-evil",
				Labels: map[string]string{render.ManagedByLabel: render.ManagedByValue,
					discoveryv1.LabelManagedBy: render.EndpointSliceManager, discoveryv1.LabelServiceName: "kube-dns"}},
				AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.53"}}},
				Ports: []discoveryv1.EndpointPort{{Name: new("dns"), Protocol: new(corev1.ProtocolUDP), Port: new(int32(53))}}},
				&client.CreateOptions{DryRun: dryRun})
		}, "for the Services it derives"},
		{"a slice for kube-dns, labelled as the endpointslice controller's", func(cl client.Client, dryRun []string) error {
			s := dnsSlice.DeepCopy()
			s.ObjectMeta = metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns-evil", Labels: dnsSlice.Labels}
			s.Endpoints[0].Addresses = []string{"192.0.2.53"}
			return cl.Create(ctx, s, &client.CreateOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"patch kube-dns's slice to another address", func(cl client.Client, dryRun []string) error {
			return mergePatch(cl, dnsSlice.DeepCopy(), `{"endpoints":[{"addresses":["192.0.2.53"]}]}`, &client.PatchOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
		{"delete kube-dns's slice", func(cl client.Client, dryRun []string) error {
			return cl.Delete(ctx, dnsSlice.DeepCopy(), &client.DeleteOptions{DryRun: dryRun})
		}, "labelled app.kubernetes.io/managed-by=mcs-gitops"},
	} {
		err := r.do(stolen, nil)
		if assert.Error(t, err, r.name) {
			assert.Contains(t, err.Error(), refused, r.name)
			assert.Contains(t, err.Error(), r.want, r.name)
		}
		assert.NoError(t, r.do(c.Client, []string{metav1.DryRunAll}), "%s, as an administrator", r.name)
	}

	got := &corev1.Service{}
	require.NoError(t, c.Client.Get(ctx, client.ObjectKeyFromObject(dns), got))
	assert.Equal(t, dnsLabels, got.Labels, "kube-dns unchanged")
	assert.Equal(t, dns.Spec.Selector, got.Spec.Selector, "kube-dns unchanged")
	assert.Empty(t, got.Spec.ExternalIPs, "kube-dns unchanged")
	left := &discoveryv1.EndpointSliceList{}
	require.NoError(t, c.Client.List(ctx, left, client.InNamespace("kube-system"), client.MatchingLabels{discoveryv1.LabelServiceName: "kube-dns"}))
	require.Len(t, left.Items, 1, "no slice added")
	assert.Equal(t, []string{"10.244.0.10"}, left.Items[0].Endpoints[0].Addresses, "kube-dns's slice unchanged")
}
