// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// testRefusedObject: one member refuses one rendered object (an admission
// policy denies a derived Service). Every other import in that member is
// still created, updated and pruned, the member's apply does not fail,
// and the refusal is on the export's status in the exporting member.
func testRefusedObject(h *harness) {
	t := h.t
	ctx := t.Context()
	c0, c1 := h.clusters[0].Client, h.clusters[1].Client
	s, files := scenarioFiles(t, "policy-invalid")
	report, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}
	cs := s.Config.Metadata.Name
	denied := render.DerivedServiceName("shop", "catalog")
	allow, err := envtest.DenyService(ctx, c1, "shop", denied, "tenant quota: no more Services in shop")
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"cart", "catalog", "checkout"} {
		export := &unstructured.Unstructured{}
		export.SetGroupVersionKind(serviceExportGVK)
		export.SetNamespace("shop")
		export.SetName(name)
		if err := c0.Create(ctx, export); err != nil {
			t.Fatal(err)
		}
	}
	// What an earlier commit left in cluster-b: a slice no longer rendered
	// (to prune) and cart's derived Service with another port (to update).
	owner := map[string]string{LabelManagedBy: ManagedByValue, LabelClusterSet: cs, LabelMember: "cluster-b"}
	stale := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "stale", Namespace: "shop", Labels: owner},
		AddressType: discoveryv1.AddressTypeIPv4}
	oldCart := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: render.DerivedServiceName("shop", "cart"), Namespace: "shop", Labels: owner},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "old", Port: 1}}}}
	for _, o := range []client.Object{stale, oldCart} {
		if err := c1.Create(ctx, o, client.FieldOwner(FieldManager)); err != nil {
			t.Fatal(err)
		}
	}

	rs := ApplyAll(ctx, []*Applier{h.applier(0, cs, "cluster-a"), h.applier(1, cs, "cluster-b")}, files, report)
	mustOK(t, rs...)
	rb := rs[1]
	if len(rb.Refused) != 1 || rb.Refused[0].Object != "Service/shop/"+denied || rb.Refused[0].Service != "shop/catalog" ||
		!strings.Contains(rb.Refused[0].Message, "tenant quota") {
		t.Fatalf("cluster-b refused %+v; want only Service/shop/%s with the policy's message", rb.Refused, denied)
	}
	if !slices.Contains(rb.Configured, "Service/shop/"+oldCart.Name) {
		t.Errorf("cart's derived Service was not updated: configured %v", rb.Configured)
	}
	if !slices.Contains(rb.Deleted, "EndpointSlice/shop/stale") {
		t.Errorf("the stale slice was not pruned: deleted %v", rb.Deleted)
	}
	for _, name := range []string{"cart", "catalog", "checkout"} {
		if h.absent(c1, siV1alpha1, "shop", name) {
			t.Errorf("cluster-b has no ServiceImport %s", name)
		}
	}
	if !h.absent(c1, serviceGVK, "shop", denied) {
		t.Errorf("the denied Service exists")
	}
	// The exporter hears of it; the other exports are Ready.
	if r := exportConds(h, c0, "shop", "catalog")["Ready"]; r.Status != "False" ||
		!strings.Contains(r.Message, "cluster-b did not take Service/shop/"+denied) || !strings.Contains(r.Message, "tenant quota") {
		t.Errorf("catalog Ready = %+v; want False naming cluster-b and the policy's message", r)
	}
	if r := exportConds(h, c0, "shop", "cart")["Ready"]; r.Status != "True" {
		t.Errorf("cart Ready = %+v; want True", r)
	}

	// Clean up for the next subtest: remove the policy, unexport.
	if err := allow(ctx); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ApplyAll(context.WithoutCancel(ctx), []*Applier{h.applier(0, cs, "cluster-a"), h.applier(1, cs, "cluster-b")}, map[string][]byte{
		"clusters/cluster-a/kustomization.yaml": []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"),
		"clusters/cluster-b/kustomization.yaml": []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"),
	}, nil)...)
	for _, name := range []string{"cart", "catalog", "checkout"} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(serviceExportGVK)
		u.SetNamespace("shop")
		u.SetName(name)
		if err := c0.Delete(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
}

// testNoMemberDirectory: a commit without the member's directory (the
// initial commit, a wrong branch) prunes nothing and fails that member,
// unless the applier allows it, as apply --ref --allow-empty does.
func testNoMemberDirectory(h *harness) {
	t := h.t
	ctx := t.Context()
	c0 := h.clusters[0].Client
	s, files := scenarioFiles(t, "single-export")
	cs := s.Config.Metadata.Name
	a := h.applier(0, cs, "cluster-a")
	mustOK(t, ApplyAll(ctx, []*Applier{a}, files, nil)...)
	if h.absent(c0, siV1alpha1, "shop", "cart") {
		t.Fatal("the import was not applied")
	}
	statusOnly := map[string][]byte{}
	for p, b := range files {
		if strings.HasPrefix(p, "status/") {
			statusOnly[p] = b
		}
	}
	rs := ApplyAll(ctx, []*Applier{a}, statusOnly, nil)
	if !errors.Is(rs[0].Err, ErrNoMemberDir) || len(rs[0].Deleted) != 0 {
		t.Fatalf("apply of a commit without clusters/cluster-a = %v, deleted %v; want ErrNoMemberDir and nothing deleted", rs[0].Err, rs[0].Deleted)
	}
	if h.absent(c0, siV1alpha1, "shop", "cart") {
		t.Fatal("the import was pruned")
	}
	// The refusal says what --allow-empty would delete.
	for _, want := range []string{"it would delete ", "ServiceImport/shop/cart", "Service/shop/" + render.DerivedServiceName("shop", "cart")} {
		if !strings.Contains(rs[0].Err.Error(), want) {
			t.Errorf("refusal %q does not name %q", rs[0].Err, want)
		}
	}
	a.AllowEmpty = true
	rs = ApplyAll(ctx, []*Applier{a}, statusOnly, nil)
	mustOK(t, rs...)
	if !slices.Contains(rs[0].Deleted, "ServiceImport/shop/cart") || !h.absent(c0, siV1alpha1, "shop", "cart") {
		t.Errorf("with AllowEmpty the imports are pruned: deleted %v", rs[0].Deleted)
	}
}

// testCopiedLabels: a user's object that carries the owner labels, copied
// from a rendered one, but was not written by mcs-gitops is never pruned.
func testCopiedLabels(h *harness) {
	t := h.t
	ctx := t.Context()
	c0 := h.clusters[0].Client
	owner := map[string]string{LabelManagedBy: ManagedByValue, LabelClusterSet: "shop", LabelMember: "cluster-a"}
	// Named as the renderer would name the Service of an import "users".
	copied := render.DerivedServiceName("shop", "users")
	users := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: copied, Namespace: "shop", Labels: owner},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if err := c0.Create(ctx, users, client.FieldOwner("kubectl-create")); err != nil {
		t.Fatal(err)
	}
	rs := ApplyAll(ctx, []*Applier{h.applier(0, "shop", "cluster-a")}, map[string][]byte{
		"clusters/cluster-a/kustomization.yaml": []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"),
	}, nil)
	mustOK(t, rs...)
	if slices.Contains(rs[0].Deleted, "Service/shop/"+copied) || h.absent(c0, serviceGVK, "shop", copied) {
		t.Fatalf("the user's Service with copied labels was pruned: deleted %v", rs[0].Deleted)
	}
	if !slices.Contains(rs[0].Skipped, "Service/shop/"+copied) {
		t.Errorf("skipped %v, want the user's Service reported", rs[0].Skipped)
	}
	// Nor is it overwritten when a commit renders an object of that name.
	managed := map[string]any{render.ManagedByLabel: render.ManagedByValue, mcsv1alpha1.LabelServiceName: "users"}
	rendered := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": copied, "namespace": "shop", "labels": managed},
		"spec":     map[string]any{"type": "ClusterIP", "ports": []any{map[string]any{"port": int64(8080), "targetPort": int64(8080)}}}}}
	imp := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
		"metadata": map[string]any{"name": "users", "namespace": "shop", "labels": map[string]any{render.ManagedByLabel: render.ManagedByValue},
			"annotations": map[string]any{render.DerivedServiceAnnotation: copied}},
		"spec": map[string]any{"type": "ClusterSetIP", "ports": []any{map[string]any{"port": int64(8080), "protocol": "TCP"}}}}}
	r, err := h.applier(0, "shop", "cluster-a").Apply(ctx, []*unstructured.Unstructured{imp, rendered}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Collisions, "Service/shop/"+copied) {
		t.Errorf("collisions %v, want the user's Service with copied labels", r.Collisions)
	}
	got := &corev1.Service{}
	if err := c0.Get(ctx, client.ObjectKeyFromObject(users), got); err != nil || got.Spec.Ports[0].Port != 80 {
		t.Errorf("the user's Service was overwritten: %v %v", err, got.Spec.Ports)
	}
	if err := c0.Delete(ctx, users); err != nil {
		t.Fatal(err)
	}
}

// testDeadlineIsNotARefusal: a cycle's deadline passing while a member's
// objects are applied is a timeout of that member, never a refusal of
// each object: under load every object of a member was reported
// "refused by the member" with the dry run's "context deadline exceeded",
// and Ready=False went onto every export.
func testDeadlineIsNotARefusal(h *harness) {
	t := h.t
	_, files := scenarioFiles(t, "single-export")
	objs, err := Build(files, "cluster-b")
	if err != nil {
		t.Fatal(err)
	}
	a := h.applier(1, "shop", "cluster-b")
	desired, err := a.prepare(objs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()

	res := &Result{Member: "cluster-b"}
	refused, err := a.applyStaged(ctx, desired, nil, res)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("staged apply past the deadline: err %v, want a deadline", err)
	}
	if len(refused) != 0 || len(res.Refused) != 0 {
		t.Errorf("a deadline refused %d object(s): %v", len(refused), res.Refused)
	}

	res = &Result{Member: "cluster-b"}
	poller := polling.NewStatusPoller(a.Client, a.Client.RESTMapper(), polling.Options{})
	rm := ssa.NewResourceManager(a.Client, poller, ssa.Owner{Field: FieldManager, Group: "mcs-gitops.io"})
	refused, err = a.applyEach(ctx, rm, desired, ssa.DefaultApplyOptions(), res)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d", len(desired), len(desired))) {
		t.Fatalf("object-by-object apply past the deadline: err %v", err)
	}
	if len(refused) != 0 || len(res.Refused) != 0 {
		t.Errorf("a deadline refused %d object(s): %v", len(refused), res.Refused)
	}

	res = &Result{Member: "cluster-b"}
	failed, err := a.applyKnown(ctx, desired, nil, res)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d", len(desired), len(desired))) {
		t.Fatalf("applying known objects past the deadline: err %v", err)
	}
	if len(failed) != 0 || len(res.Refused) != 0 {
		t.Errorf("a deadline failed %d object(s): %v", len(failed), res.Refused)
	}
}
