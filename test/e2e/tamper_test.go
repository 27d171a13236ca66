// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// The objects a pull request added under clusters/cluster-2/: each one a
// shape the renderer never emits, each one created by the applier before
// the contract existed.
const tampered = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes-extra
  namespace: default
  labels: {app.kubernetes.io/managed-by: mcs-gitops, endpointslice.kubernetes.io/managed-by: mcs-gitops.io, kubernetes.io/service-name: kubernetes, multicluster.kubernetes.io/service-name: kubernetes}
addressType: IPv4
endpoints: [{addresses: [10.9.9.9]}]
ports: [{name: https, port: 443, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: checkout-extra
  namespace: shop
  labels: {app.kubernetes.io/managed-by: mcs-gitops, endpointslice.kubernetes.io/managed-by: mcs-gitops.io, kubernetes.io/service-name: checkout, multicluster.kubernetes.io/service-name: cart}
addressType: IPv4
endpoints: [{addresses: [10.9.9.9]}]
ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata:
  name: dns-hijack
  namespace: shop
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: cart}
spec: {type: ClusterIP, externalIPs: [8.8.8.8], ports: [{port: 53, targetPort: 53, protocol: UDP}]}
---
apiVersion: v1
kind: Namespace
metadata:
  name: privileged
  labels: {app.kubernetes.io/managed-by: mcs-gitops, pod-security.kubernetes.io/enforce: privileged}
`

// pushTamperedCommit adds tampered.yaml to cluster-2's directory and its
// kustomization, as a merged pull request, with the git binary.
func pushTamperedCommit(t *testing.T, remote string) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	require.NoError(t, err)
	dir := t.TempDir()
	run := func(args ...string) {
		out, err := exec.Command(gitBin, append([]string{"-C", dir, "-c", "user.name=pr", "-c", "user.email=pr@example.com"}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	run("clone", "-q", "-b", "main", remote, ".")
	member := filepath.Join(dir, "clusters", "cluster-2")
	require.NoError(t, os.WriteFile(filepath.Join(member, "tampered.yaml"), []byte(tampered), 0o644))
	k, err := os.OpenFile(filepath.Join(member, "kustomization.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = k.WriteString("- tampered.yaml\n")
	require.NoError(t, err)
	require.NoError(t, k.Close())
	// And a rendered object changed into one the renderer never emits.
	derived := filepath.Join(member, "shop", "cart", "derived-service.yaml")
	b, err := os.ReadFile(derived)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(derived, []byte(strings.Replace(string(b), "spec:\n", "spec:\n  externalIPs: [203.0.113.7]\n", 1)), 0o644))
	run("add", "-A")
	run("commit", "-q", "-m", "innocent change")
	run("push", "-q", "origin", "main")
}

// TestTamperedCommitAppliesOnlyRenderedShapes: a commit that adds objects
// the renderer never emits gets none of them into the member; everything
// rendered is applied as usual; apply --ref exits as a member problem
// naming each refused object; the next sync renders the file away.
func TestTamperedCommitAppliesOnlyRenderedShapes(t *testing.T) {
	w := newWorld(t, 2, "")
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	checkout := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: "shop"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "checkout"}}}
	require.NoError(t, c2.Client.Create(ctx, checkout))
	w.sync()

	pushTamperedCommit(t, w.remote)
	head, _ := w.remoteHead()
	loop := w.newLoop(filepath.Join(t.TempDir(), "clone"))
	_, err := loop.ApplyRef(ctx, plumbing.NewHash(head), false)
	var partial *reconcile.PartialError
	require.True(t, errors.As(err, &partial), "refused objects are member problems: %v", err)
	for _, obj := range []string{"EndpointSlice/default/kubernetes-extra", "EndpointSlice/shop/checkout-extra", "Service/shop/dns-hijack", "Namespace/privileged"} {
		assert.Contains(t, partial.Error(), "cluster-2: not applied: "+obj+": not a shape mcs-gitops renders")
	}
	assert.False(t, exists(c2.Client, &discoveryv1.EndpointSlice{}, "default", "kubernetes-extra"))
	assert.False(t, exists(c2.Client, &discoveryv1.EndpointSlice{}, "shop", "checkout-extra"))
	assert.False(t, exists(c2.Client, &corev1.Service{}, "shop", "dns-hijack"))
	assert.False(t, exists(c2.Client, &corev1.Namespace{}, "", "privileged"))
	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "the rendered objects are applied")
	derived := render.DerivedServiceName("shop", "cart")
	assert.Contains(t, partial.Error(), "cluster-2: not applied: Service/shop/"+derived+": not a shape mcs-gitops renders, refused before applying: spec.externalIPs")
	svc := &corev1.Service{}
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: derived}, svc), "what was applied before is not lost")
	assert.Empty(t, svc.Spec.ExternalIPs)

	// The next cycle renders the member's directory again: the file is gone.
	out, err := loop.Sync(ctx)
	require.NoError(t, err)
	assert.True(t, out.Committed)
	files, err := loop.Repo.Files(out.Commit)
	require.NoError(t, err)
	assert.NotContains(t, files, "clusters/cluster-2/tampered.yaml")
}
