// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// syncBuffer collects log output written from several goroutines.
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

// fixedClock is a settable clock for condition transition times.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

type harness struct {
	t        *testing.T
	clusters []*envtest.Cluster
	clock    *fixedClock
	logs     *syncBuffer
	log      *slog.Logger
}

// applierFor returns an Applier for member on cluster i, with the
// contract member has in cfg.
func (h *harness) applierFor(i int, cfg *v1alpha1.ClusterSet, member string) *Applier {
	a := h.applier(i, cfg.Metadata.Name, member)
	for j := range cfg.Spec.Members {
		if cfg.Spec.Members[j].Name == member {
			a.Contract = contract.MemberOf(cfg, &cfg.Spec.Members[j])
		}
	}
	return a
}

// applier returns an Applier for member on cluster i.
func (h *harness) applier(i int, clusterSet, member string) *Applier {
	a := New(h.clusters[i].Client, clusterSet, contract.Member{Name: member}, h.log)
	a.Now = h.clock.Now
	return a
}

func (h *harness) get(c client.Client, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	h.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(h.t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		h.t.Fatalf("get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return u
}

func (h *harness) absent(c client.Client, gvk schema.GroupVersionKind, ns, name string) bool {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := c.Get(h.t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u)
	return apierrors.IsNotFound(err)
}

// versions maps every object of the allowed kinds (and ServiceExports) in
// a cluster to its resourceVersion.
func (h *harness) versions(c client.Client) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	gvks := []schema.GroupVersionKind{
		{Group: "multicluster.x-k8s.io", Version: "v1beta1", Kind: "ServiceImportList"},
		{Group: "multicluster.x-k8s.io", Version: "v1beta1", Kind: "ServiceExportList"},
		{Version: "v1", Kind: "ServiceList"},
		{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSliceList"},
		{Version: "v1", Kind: "NamespaceList"},
	}
	for _, gvk := range gvks {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk)
		if err := c.List(h.t.Context(), l); err != nil {
			h.t.Fatal(err)
		}
		for _, it := range l.Items {
			out[gvk.Kind+"/"+it.Namespace+"/"+it.Name] = it.ResourceVersion
		}
	}
	return out
}

func mustOK(t *testing.T, rs ...*Result) {
	t.Helper()
	for _, r := range rs {
		if r.Err != nil {
			t.Fatalf("member %s: %v", r.Member, r.Err)
		}
	}
}

var (
	siV1alpha1 = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceImport"}
	siV1beta1  = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1beta1", Kind: "ServiceImport"}
	sliceGVK   = schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}
	nsGVK      = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
)

const (
	derivedCart = "derived-bsqa4s8pq5"
	cartSlice   = "derived-bsqa4s8pq5-cluster-a-cr7e69hgre"
)

// TestApplyOnRealClusters applies rendered scenarios to two real
// kube-apiservers. The subtests run in order and each removes what it
// applied, by applying an empty set (which is the "unexport" path).
func TestApplyOnRealClusters(t *testing.T) {
	h := &harness{t: t, clusters: envtest.Start(t, 2), logs: &syncBuffer{}}
	h.clock = &fixedClock{t: time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)}
	h.log = slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("applier logs:\n%s", h.logs.String())
		}
	})
	for _, c := range h.clusters {
		if err := envtest.EnsureNamespaces(t.Context(), c.Client, "shop", "db"); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("single export", func(t *testing.T) { h.t = t; testSingleExport(h) })
	t.Run("v1beta1 imports", func(t *testing.T) { h.t = t; testV1beta1(h) })
	t.Run("headless", func(t *testing.T) { h.t = t; testHeadless(h) })
	t.Run("memory skips unchanged objects until it ages out", func(t *testing.T) { h.t = t; testMemory(h) })
	t.Run("memory skips unchanged status until the snapshot changes", func(t *testing.T) { h.t = t; testStatusMemory(h) })
	t.Run("turning headless releases spec.ips", func(t *testing.T) { h.t = t; testTurnHeadless(h) })
	t.Run("namespace is create-only", func(t *testing.T) { h.t = t; testNamespace(h) })
	t.Run("one bad member does not stop the others", func(t *testing.T) { h.t = t; testBadMember(h) })
	t.Run("policy status", func(t *testing.T) { h.t = t; testPolicyStatus(h) })
	t.Run("ListenerSet applied and pruned", func(t *testing.T) { h.t = t; testListenerSet(h) })
	t.Run("listeners merged into the member's Gateway", func(t *testing.T) { h.t = t; testGatewayListeners(h) })
	t.Run("one refused object does not stop the others", func(t *testing.T) { h.t = t; testRefusedObject(h) })
	t.Run("a deadline is not a refusal", func(t *testing.T) { h.t = t; testDeadlineIsNotARefusal(h) })
	t.Run("a commit without the member's directory prunes nothing unless allowed", func(t *testing.T) { h.t = t; testNoMemberDirectory(h) })
	t.Run("copied owner labels are not enough to be pruned", func(t *testing.T) { h.t = t; testCopiedLabels(h) })
	t.Run("an export deleted before its status is written", func(t *testing.T) { h.t = t; testExportGoneBeforeStatus(h) })
	// The collision check reads few objects one by one and many with a
	// list per kind and namespace: the same verdicts either way.
	listed := func(name string, test func(*harness)) {
		t.Run(name+" (collisions from a metadata list)", func(t *testing.T) {
			defer func(n int) { listAtLeast = n }(listAtLeast)
			listAtLeast = 1
			h.t = t
			test(h)
		})
	}
	listed("single export", testSingleExport)
	listed("copied owner labels are not enough to be pruned", testCopiedLabels)
}

func testSingleExport(h *harness) {
	t := h.t
	ctx := t.Context()
	c0, c1 := h.clusters[0].Client, h.clusters[1].Client
	s, files := scenarioFiles(t, "single-export")
	report, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}

	// The export the report talks about exists in cluster-a.
	export := &unstructured.Unstructured{}
	export.SetGroupVersionKind(serviceExportGVK)
	export.SetNamespace("shop")
	export.SetName("cart")
	if err := c0.Create(ctx, export); err != nil {
		t.Fatal(err)
	}
	// A user's Service in cluster-b happens to have the derived name.
	userSvc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: derivedCart, Namespace: "shop", Labels: map[string]string{"owner": "user"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 8080}}},
	}
	if err := c1.Create(ctx, userSvc); err != nil {
		t.Fatal(err)
	}
	// Objects that prune must never touch: a slice of another member of
	// the same ClusterSet, and a user's slice with no labels at all.
	foreign := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: "shop", Labels: map[string]string{
			LabelManagedBy: ManagedByValue, LabelClusterSet: s.Config.Metadata.Name, LabelMember: "cluster-z"}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	users := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "users", Namespace: "shop"},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, o := range []client.Object{foreign, users} {
		if err := c0.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	t0 := h.clock.Now()
	targets := []*Applier{h.applierFor(0, s.Config, "cluster-a"), h.applierFor(1, s.Config, "cluster-b")}
	start := time.Now()
	rs := ApplyAll(ctx, targets, files, report)
	t.Logf("first ApplyAll: %s", time.Since(start))
	mustOK(t, rs...)
	ra, rb := rs[0], rs[1]
	if len(ra.Created) != 3 || len(ra.Collisions) != 0 {
		t.Errorf("cluster-a: created %v collisions %v; want 3 created, no collision", ra.Created, ra.Collisions)
	}
	if want := []string{"Service/shop/" + derivedCart}; !slices.Equal(rb.Collisions, want) {
		t.Errorf("cluster-b collisions = %v, want %v", rb.Collisions, want)
	}
	if len(rb.Created) != 2 {
		t.Errorf("cluster-b created %v, want the ServiceImport and the slice", rb.Created)
	}
	if !strings.Contains(h.logs.String(), "msg=applied member=cluster-a created=3 configured=0 unchanged=0 deleted=0") {
		t.Errorf("no one-line change set for cluster-a in the logs:\n%s", h.logs.String())
	}

	// Owner labels on everything applied.
	for _, o := range []struct {
		gvk    schema.GroupVersionKind
		name   string
		c      client.Client
		member string
	}{
		{siV1alpha1, "cart", c0, "cluster-a"}, {serviceGVK, derivedCart, c0, "cluster-a"}, {sliceGVK, cartSlice, c0, "cluster-a"},
		{siV1alpha1, "cart", c1, "cluster-b"}, {sliceGVK, cartSlice, c1, "cluster-b"},
	} {
		u := h.get(o.c, o.gvk, "shop", o.name)
		l := u.GetLabels()
		if l[LabelManagedBy] != ManagedByValue || l[LabelClusterSet] != "shop" || l[LabelMember] != o.member {
			t.Errorf("%s %s on %s: labels %v lack the owner labels", o.gvk.Kind, o.name, o.member, l)
		}
	}
	// The user's Service is untouched.
	gotUser := h.get(c1, serviceGVK, "shop", derivedCart)
	if gotUser.GetResourceVersion() != userSvc.ResourceVersion || gotUser.GetLabels()[LabelMember] != "" {
		t.Errorf("user's Service was modified: rv %s -> %s, labels %v", userSvc.ResourceVersion, gotUser.GetResourceVersion(), gotUser.GetLabels())
	}

	// spec.ips from the derived Service, status.clusters as rendered.
	svc := h.get(c0, serviceGVK, "shop", derivedCart)
	clusterIPs, _, _ := unstructured.NestedStringSlice(svc.Object, "spec", "clusterIPs")
	si := h.get(c0, siV1alpha1, "shop", "cart")
	ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
	if len(clusterIPs) == 0 || !slices.Equal(ips, clusterIPs) {
		t.Errorf("ServiceImport spec.ips = %v, want the derived Service's cluster IPs %v", ips, clusterIPs)
	}
	if !managedBy(si, IPsFieldManager) || !managedBy(si, StatusFieldManager) || !managedBy(si, FieldManager) {
		t.Errorf("ServiceImport managers: %v", managers(si))
	}
	clusters, _, _ := unstructured.NestedSlice(si.Object, "status", "clusters")
	if len(clusters) != 1 || clusters[0].(map[string]any)["cluster"] != "cluster-a" {
		t.Errorf("ServiceImport status.clusters = %v, want [cluster-a]", clusters)
	}
	// cluster-b's derived Service is the user's: its IPs are not imported.
	siB := h.get(c1, siV1alpha1, "shop", "cart")
	if ipsB, _, _ := unstructured.NestedStringSlice(siB.Object, "spec", "ips"); len(ipsB) != 0 {
		t.Errorf("cluster-b ServiceImport took ips %v from a user's Service", ipsB)
	}

	// Export conditions. The collision in cluster-b is a member problem
	// of this export: Ready=False, naming the member and the object.
	conds := exportConds(h, c0, "shop", "cart")
	gen := h.get(c0, serviceExportGVK, "shop", "cart").GetGeneration()
	if r := conds["Ready"]; r.Reason != "Failed" || !strings.Contains(r.Message, "cluster-b did not take Service/shop/"+derivedCart) {
		t.Errorf("ServiceExport Ready = %+v, want Failed naming cluster-b's collision", r)
	}
	for typ, status := range map[string]metav1.ConditionStatus{"Valid": "True", "Conflict": "False", "Ready": "False"} {
		c, ok := conds[typ]
		switch {
		case !ok:
			t.Errorf("ServiceExport has no %s condition: %v", typ, conds)
		case c.Status != status || c.ObservedGeneration != gen || !c.LastTransitionTime.Time.Equal(t0):
			t.Errorf("ServiceExport %s = %+v, want status %s, observedGeneration %d, lastTransitionTime %s", typ, c, status, gen, t0)
		}
	}

	// A second apply of the same commit changes nothing, not even a
	// resourceVersion, however late it runs.
	before0, before1 := h.versions(c0), h.versions(c1)
	h.clock.Set(t0.Add(time.Hour))
	start = time.Now()
	rs = ApplyAll(ctx, targets, files, report)
	t.Logf("second ApplyAll: %s", time.Since(start))
	mustOK(t, rs...)
	for _, r := range rs {
		if len(r.Created)+len(r.Configured)+len(r.Deleted)+len(r.StatusWritten) != 0 {
			t.Errorf("second apply on %s: created %v configured %v deleted %v status %v; want nothing",
				r.Member, r.Created, r.Configured, r.Deleted, r.StatusWritten)
		}
	}
	if len(rs[0].Unchanged) != 3 || len(rs[1].Unchanged) != 2 || len(rs[1].Collisions) != 1 {
		t.Errorf("second apply: unchanged %v / %v, collisions %v", rs[0].Unchanged, rs[1].Unchanged, rs[1].Collisions)
	}
	assertSameVersions(t, "cluster-1", before0, h.versions(c0))
	assertSameVersions(t, "cluster-2", before1, h.versions(c1))

	// A changed condition gets a new transition time; unchanged ones keep theirs.
	changed, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range changed.Services[0].Exports[0].Conditions {
		if c.Type == "Conflict" {
			changed.Services[0].Exports[0].Conditions[i] = conflictTrue
		}
	}
	t2 := t0.Add(2 * time.Hour)
	h.clock.Set(t2)
	objsA, err := Build(files, "cluster-a")
	if err != nil {
		t.Fatal(err)
	}
	r, err := targets[0].Apply(ctx, objsA, changed)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ServiceExport/shop/cart status"}; !slices.Equal(r.StatusWritten, want) {
		t.Errorf("status written = %v, want %v", r.StatusWritten, want)
	}
	conds = exportConds(h, c0, "shop", "cart")
	if c := conds["Conflict"]; c.Status != "True" || c.Reason != conflictTrue.Reason || !c.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("Conflict = %+v, want True %s since %s", c, conflictTrue.Reason, t2)
	}
	if c := conds["Valid"]; !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Valid lastTransitionTime = %s, want it kept at %s", c.LastTransitionTime, t0)
	}

	// Prune: a slice no longer rendered goes; nothing unowned does.
	var withoutSlice []*unstructured.Unstructured
	for _, o := range objsA {
		if o.GetKind() != "EndpointSlice" {
			withoutSlice = append(withoutSlice, o)
		}
	}
	r, err = targets[0].Apply(ctx, withoutSlice, changed)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"EndpointSlice/shop/" + cartSlice}; !slices.Equal(r.Deleted, want) {
		t.Errorf("pruned %v, want %v", r.Deleted, want)
	}
	if !h.absent(c0, sliceGVK, "shop", cartSlice) {
		t.Error("pruned slice still exists")
	}
	for _, name := range []string{"foreign", "users"} {
		h.get(c0, sliceGVK, "shop", name) // fails the test if pruned
	}

	// Unexport: applying nothing removes everything this tool applied.
	for i, a := range targets {
		r, err := a.Apply(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{2, 2}[i]; len(r.Deleted) != want {
			t.Errorf("%s: deleted %v, want %d objects", a.Member, r.Deleted, want)
		}
	}
	for _, c := range []client.Client{c0, c1} {
		if !h.absent(c, siV1alpha1, "shop", "cart") || !h.absent(c, sliceGVK, "shop", cartSlice) {
			t.Error("imports left after unexport")
		}
	}
	h.get(c1, serviceGVK, "shop", derivedCart) // the user's Service stays
	h.get(c0, nsGVK, "", "shop")

	for _, o := range []client.Object{userSvc, foreign, users} {
		if err := client.IgnoreNotFound(h.clusters[0].Client.Delete(ctx, o)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c1.Delete(ctx, userSvc); err != nil {
		t.Fatal(err)
	}
	if err := c0.Delete(ctx, export); err != nil {
		t.Fatal(err)
	}
}

var conflictTrue = render.Condition{Type: "Conflict", Status: "True", Reason: "PortConflict", Message: "port http conflicts with cluster-z"}

func exportConds(h *harness, c client.Client, ns, name string) map[string]metav1.Condition {
	h.t.Helper()
	u := h.get(c, serviceExportGVK, ns, name)
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var conds []metav1.Condition
	if err := fromUnstructured(raw, &conds); err != nil {
		h.t.Fatal(err)
	}
	out := map[string]metav1.Condition{}
	for _, c := range conds {
		out[c.Type] = c
	}
	return out
}

func managers(u *unstructured.Unstructured) []string {
	var out []string
	for _, mf := range u.GetManagedFields() {
		out = append(out, mf.Manager+"/"+mf.Subresource)
	}
	return out
}

func assertSameVersions(t *testing.T, cluster string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s resourceVersion %s -> %q", cluster, k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s appeared", cluster, k)
		}
	}
}

func testV1beta1(h *harness) {
	t := h.t
	ctx := t.Context()
	s, files := scenarioFiles(t, "v1beta1-serviceimports")
	report, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}
	targets := []*Applier{h.applierFor(0, s.Config, "cluster-a"), h.applierFor(1, s.Config, "cluster-b")}
	rs := ApplyAll(ctx, targets, files, report)
	mustOK(t, rs...)
	for i, c := range h.clusters {
		svc := h.get(c.Client, serviceGVK, "shop", derivedCart)
		want, _, _ := unstructured.NestedStringSlice(svc.Object, "spec", "clusterIPs")
		si := h.get(c.Client, siV1beta1, "shop", "cart")
		got, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: v1beta1 ServiceImport spec.ips = %v, want %v", targets[i].Member, got, want)
		}
		conds, _, _ := unstructured.NestedSlice(si.Object, "status", "conditions")
		if len(conds) != 1 || conds[0].(map[string]any)["type"] != "Ready" || conds[0].(map[string]any)["status"] != "True" {
			t.Errorf("%s: v1beta1 ServiceImport conditions = %v, want Ready=True", targets[i].Member, conds)
		}
	}
	before := h.versions(h.clusters[0].Client)
	rs = ApplyAll(ctx, targets, files, report)
	mustOK(t, rs...)
	for _, r := range rs {
		if len(r.Created)+len(r.Configured)+len(r.StatusWritten) != 0 {
			t.Errorf("%s: second apply created %v configured %v status %v", r.Member, r.Created, r.Configured, r.StatusWritten)
		}
	}
	assertSameVersions(t, "cluster-1", before, h.versions(h.clusters[0].Client))
	cleanup(h, targets)
}

func testHeadless(h *harness) {
	t := h.t
	ctx := t.Context()
	s, files := scenarioFiles(t, "headless-with-hostnames")
	report, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}
	targets := []*Applier{h.applierFor(0, s.Config, "cluster-a"), h.applierFor(1, s.Config, "cluster-b")}
	rs := ApplyAll(ctx, targets, files, report)
	mustOK(t, rs...)
	for _, r := range rs {
		if len(r.Created) != 4 {
			t.Errorf("%s: created %v, want ServiceImport, derived Service, 2 slices", r.Member, r.Created)
		}
		for _, w := range r.StatusWritten {
			if strings.HasSuffix(w, "spec.ips") {
				t.Errorf("%s: wrote %s for a headless import", r.Member, w)
			}
		}
	}
	si := h.get(h.clusters[0].Client, siV1alpha1, "db", "postgres")
	if typ, _, _ := unstructured.NestedString(si.Object, "spec", "type"); typ != "Headless" {
		t.Errorf("type %q, want Headless", typ)
	}
	if ips, ok, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips"); ok {
		t.Errorf("headless import has ips %v", ips)
	}
	cleanup(h, targets)
}

func testNamespace(h *harness) {
	t := h.t
	ctx := t.Context()
	s, files := scenarioFiles(t, "create-missing-namespaces")
	objs, err := Build(files, "cluster-c")
	if err != nil {
		t.Fatal(err)
	}
	// The scenario's namespace exists in the test clusters: move the
	// member's objects to one that does not.
	const ns = "fresh"
	var hasNamespace bool
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			o.SetName(ns)
			hasNamespace = true
		} else {
			o.SetNamespace(ns)
		}
		// Derived names hash the namespace: rename as the renderer would,
		// or the contract refuses the moved objects.
		svc := o.GetLabels()[mcsv1alpha1.LabelServiceName]
		switch o.GetKind() {
		case "ServiceImport":
			o.SetAnnotations(map[string]string{render.DerivedServiceAnnotation: render.DerivedServiceName(ns, o.GetName())})
		case "Service":
			o.SetName(render.DerivedServiceName(ns, svc))
		case "EndpointSlice":
			l := o.GetLabels()
			l[discoveryv1.LabelServiceName] = render.DerivedServiceName(ns, svc)
			o.SetLabels(l)
		}
	}
	if !hasNamespace {
		t.Fatal("scenario renders no Namespace for cluster-c")
	}
	a := h.applierFor(1, s.Config, "cluster-c")
	r, err := a.Apply(ctx, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Created, "Namespace/"+ns) || len(r.Created) != 4 {
		t.Errorf("created %v, want the Namespace and three objects in it", r.Created)
	}
	r, err = a.Apply(ctx, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Skipped, []string{"Namespace/" + ns}) || len(r.Unchanged) != 3 {
		t.Errorf("second apply: skipped %v unchanged %v; want the existing Namespace skipped", r.Skipped, r.Unchanged)
	}
	r, err = a.Apply(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Deleted) != 3 || slices.Contains(r.Deleted, "Namespace//"+ns) {
		t.Errorf("deleted %v, want the three objects and never the Namespace", r.Deleted)
	}
	n := h.get(h.clusters[1].Client, nsGVK, "", ns)
	if n.GetDeletionTimestamp() != nil {
		t.Error("the Namespace is being deleted")
	}
}

func testBadMember(h *harness) {
	t := h.t
	ctx := t.Context()
	s, files := scenarioFiles(t, "single-export")
	files["clusters/cluster-b/shop/cart/clusterrole.yaml"] = []byte(
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: evil\nrules: []\n")
	files["clusters/cluster-b/kustomization.yaml"] = append(append([]byte{}, files["clusters/cluster-b/kustomization.yaml"]...),
		"- shop/cart/clusterrole.yaml\n"...)
	targets := []*Applier{h.applierFor(0, s.Config, "cluster-a"), h.applierFor(1, s.Config, "cluster-b")}
	rs := ApplyAll(ctx, targets, files, nil)
	if rs[0].Err != nil || len(rs[0].Created) != 3 {
		t.Errorf("cluster-a: created %v, err %v; want its 3 objects despite cluster-b", rs[0].Created, rs[0].Err)
	}
	if err := rs[1].Err; err == nil || !strings.Contains(err.Error(), "clusters/cluster-b/shop/cart/clusterrole.yaml") ||
		!strings.Contains(err.Error(), "ClusterRole") {
		t.Errorf("cluster-b error %v does not name the file and the kind", err)
	}
	if !h.absent(h.clusters[1].Client, siV1alpha1, "shop", "cart") {
		t.Error("cluster-b got objects from a directory that failed the allow-list")
	}
	if !h.absent(h.clusters[1].Client, schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "", "evil") {
		t.Error("the ClusterRole was created")
	}
	cleanup(h, targets)
}

func cleanup(h *harness, targets []*Applier) {
	h.t.Helper()
	for _, a := range targets {
		if _, err := a.Apply(context.WithoutCancel(h.t.Context()), nil, nil); err != nil {
			h.t.Fatal(err)
		}
	}
}

func testTurnHeadless(h *harness) {
	t := h.t
	ctx := t.Context()
	c0 := h.clusters[0].Client
	s, files := scenarioFiles(t, "single-export")
	objs, err := Build(files, "cluster-b")
	if err != nil {
		t.Fatal(err)
	}
	a := h.applierFor(0, s.Config, "cluster-b")
	if _, err := a.Apply(ctx, objs, nil); err != nil {
		t.Fatal(err)
	}
	si := h.get(c0, siV1alpha1, "shop", "cart")
	if ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips"); len(ips) == 0 {
		t.Fatal("no spec.ips before the change")
	}
	// The winning export turned headless: the derived Service's clusterIP
	// (immutable) becomes None and the import Headless.
	for _, o := range objs {
		switch o.GetKind() {
		case "Service":
			if err := unstructured.SetNestedField(o.Object, "None", "spec", "clusterIP"); err != nil {
				t.Fatal(err)
			}
		case "ServiceImport":
			if err := unstructured.SetNestedField(o.Object, "Headless", "spec", "type"); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := a.Apply(ctx, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("created %v configured %v status %v", r.Created, r.Configured, r.StatusWritten)
	svc := h.get(c0, serviceGVK, "shop", derivedCart)
	if ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP"); ip != "None" {
		t.Errorf("derived Service clusterIP %q, want None", ip)
	}
	si = h.get(c0, siV1alpha1, "shop", "cart")
	if ips, ok, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips"); ok {
		t.Errorf("headless import kept spec.ips %v", ips)
	}
	if managedBy(si, IPsFieldManager) {
		t.Errorf("%s still a manager: %v", IPsFieldManager, managers(si))
	}
	r, err = a.Apply(ctx, objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Created)+len(r.Configured)+len(r.StatusWritten) != 0 {
		t.Errorf("reapply after the change: created %v configured %v status %v", r.Created, r.Configured, r.StatusWritten)
	}
	cleanup(h, []*Applier{a})
}
