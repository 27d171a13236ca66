// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// testMemory: with a Memory, an unchanged object costs nothing on the
// next apply, even when someone deleted it meanwhile (drift waits for the
// resync); forgetting, or reaching MaxAge, applies everything again.
func testMemory(h *harness) {
	t := h.t
	ctx := t.Context()
	s, files := scenarioFiles(t, "headless-with-hostnames")
	report, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}
	a := h.applierFor(0, s.Config, "cluster-a")
	a.Memory = NewMemory(time.Hour)
	mustOK(t, ApplyAll(ctx, []*Applier{a}, files, report)...)

	si := h.get(h.clusters[0].Client, siV1alpha1, "db", "postgres")
	if err := h.clusters[0].Client.Delete(ctx, si); err != nil {
		t.Fatal(err)
	}
	rs := ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	if len(rs[0].Created)+len(rs[0].Configured) != 0 || len(rs[0].Unchanged) != 4 {
		t.Errorf("remembered apply: created %v configured %v unchanged %v; want 4 unchanged and no request",
			rs[0].Created, rs[0].Configured, rs[0].Unchanged)
	}
	if !h.absent(h.clusters[0].Client, siV1alpha1, "db", "postgres") {
		t.Error("a remembered object was applied anyway")
	}

	h.clock.Set(h.clock.Now().Add(2 * time.Hour))
	rs = ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	if len(rs[0].Created) != 1 {
		t.Errorf("after MaxAge: created %v, want the deleted ServiceImport back", rs[0].Created)
	}
	h.get(h.clusters[0].Client, siV1alpha1, "db", "postgres")

	// An object labelled and written as ours appears: with the same
	// desired set, prune does not list again and it waits for the resync.
	planted := &unstructured.Unstructured{}
	planted.SetAPIVersion("v1")
	planted.SetKind("Service")
	planted.SetNamespace("db")
	planted.SetName("planted")
	planted.SetLabels(a.ownerLabels())
	require.NoError(t, unstructured.SetNestedSlice(planted.Object, []any{map[string]any{"port": int64(80)}}, "spec", "ports"))
	require.NoError(t, h.clusters[0].Client.Create(ctx, planted, client.FieldOwner(FieldManager)))
	rs = ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	assert.Empty(t, rs[0].Deleted, "the desired set was pruned against already")

	// One object leaves the desired set: prune reads it by name and
	// deletes it; the planted one still waits for the resync.
	dir := layout.MemberDir("cluster-a")
	resources := kustomizationResources(t, files, "cluster-a")
	smaller := maps.Clone(files)
	gone := resources[len(resources)-1]
	delete(smaller, dir+gone)
	smaller[dir+kustomizationFile] = mustYAML(t, map[string]any{"resources": resources[:len(resources)-1]})
	rs = ApplyAll(ctx, []*Applier{a}, smaller, report)
	mustOK(t, rs...)
	require.Len(t, rs[0].Deleted, 1, "deleted %v", rs[0].Deleted)
	assert.NotContains(t, rs[0].Deleted, "Service/db/planted")
	h.clock.Set(h.clock.Now().Add(2 * time.Hour))
	rs = ApplyAll(ctx, []*Applier{a}, smaller, report)
	mustOK(t, rs...)
	assert.Equal(t, []string{"Service/db/planted"}, rs[0].Deleted, "the resync lists every object, and deletes the planted one")

	// It comes back (the set only grows: prune does not list), and leaves
	// again: prune lists, and deletes what the cycle it did not list for
	// applied.
	rs = ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	require.Len(t, rs[0].Created, 1, "the object back: %v", rs[0].Created)
	assert.Empty(t, rs[0].Deleted)
	rs = ApplyAll(ctx, []*Applier{a}, smaller, report)
	mustOK(t, rs...)
	assert.Len(t, rs[0].Deleted, 1, "deleted %v", rs[0].Deleted)
	cleanup(h, []*Applier{a})
}

// An Applier without a Memory (apply --ref) must report an apply error as
// the apiserver's message; forgetting nothing must not panic.
func TestNilMemoryForgets(t *testing.T) {
	var m *Memory
	assert.NotPanics(t, m.Forget)
}

// An object handed to prepare again (the same pointer, as a BuildCache
// hands out an unchanged one) is not copied and hashed again; another
// object, even an equal one, is; what one prepare does not use is
// dropped.
func TestMemoryKeepsPreparedObjects(t *testing.T) {
	obj := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Service")
		u.SetNamespace("shop")
		u.SetName(name)
		return u
	}
	a := &Applier{Member: "cluster-a", ClusterSet: "cs", Memory: NewMemory(time.Hour)}
	cart, users := obj("cart"), obj("users")
	first, err := a.prepare([]*unstructured.Unstructured{cart, users})
	require.NoError(t, err)
	again, err := a.prepare([]*unstructured.Unstructured{cart, obj("users")})
	require.NoError(t, err)
	assert.Same(t, first[0].obj, again[0].obj, "the same built object is prepared once")
	assert.NotSame(t, first[1].obj, again[1].obj, "another built object is prepared anew")
	assert.Equal(t, first[1].obj, again[1].obj)
	assert.Equal(t, first[1].sum, again[1].sum)
	assert.Equal(t, "mcs-gitops", again[0].obj.GetLabels()[LabelManagedBy], "prepared objects carry the owner labels")

	_, err = a.prepare([]*unstructured.Unstructured{obj("cart")})
	require.NoError(t, err)
	_, err = a.prepare([]*unstructured.Unstructured{cart})
	require.NoError(t, err)
	assert.Len(t, a.Memory.prepared, 1)
	_, kept := a.Memory.prepared[cart]
	assert.True(t, kept)
	third, err := a.prepare([]*unstructured.Unstructured{cart})
	require.NoError(t, err)
	assert.NotSame(t, first[0].obj, third[0].obj, "dropped when a prepare did not use it")

	// No Memory: every object is prepared.
	a.Memory = nil
	x, err := a.prepare([]*unstructured.Unstructured{cart})
	require.NoError(t, err)
	y, err := a.prepare([]*unstructured.Unstructured{cart})
	require.NoError(t, err)
	assert.NotSame(t, x[0].obj, y[0].obj)
}

// testStatusMemory: with a Memory and the member's snapshot, export
// status is listed and written only when the snapshot or the member's
// part of the report changed since the last write-back, or the memory
// aged out; someone else clearing it meanwhile is drift, repaired then.
func testStatusMemory(h *harness) {
	t := h.t
	ctx := t.Context()
	c0 := h.clusters[0].Client
	s, rendered := scenarioFiles(t, "single-export")
	report, err := layout.ReadReport(rendered)
	require.NoError(t, err)
	export := &unstructured.Unstructured{}
	export.SetGroupVersionKind(serviceExportGVK)
	export.SetNamespace("shop")
	export.SetName("cart")
	require.NoError(t, c0.Create(ctx, export))
	t.Cleanup(func() { require.NoError(t, c0.Delete(context.Background(), export)) })

	files := maps.Clone(rendered)
	files[layout.InputFile("cluster-a")] = []byte("snapshot 1\n")
	a := h.applierFor(0, s.Config, "cluster-a")
	a.Memory = NewMemory(time.Hour)
	apply := func(files map[string][]byte) *Result {
		t.Helper()
		rs := ApplyAll(ctx, []*Applier{a}, files, report)
		mustOK(t, rs...)
		return rs[0]
	}
	clear := func() {
		t.Helper()
		u := h.get(c0, serviceExportGVK, "shop", "cart")
		unstructured.RemoveNestedField(u.Object, "status")
		require.NoError(t, c0.Status().Update(ctx, u))
		require.Empty(t, exportConds(h, c0, "shop", "cart"))
	}
	apply(files)
	require.NotEmpty(t, exportConds(h, c0, "shop", "cart"), "first write-back")

	clear()
	apply(files)
	assert.Empty(t, exportConds(h, c0, "shop", "cart"), "same snapshot, same report: not listed, not written")

	files[layout.InputFile("cluster-a")] = []byte("snapshot 2\n")
	apply(files)
	assert.NotEmpty(t, exportConds(h, c0, "shop", "cart"), "a changed snapshot writes status again")

	clear()
	h.clock.Set(h.clock.Now().Add(2 * time.Hour))
	apply(files)
	assert.NotEmpty(t, exportConds(h, c0, "shop", "cart"), "after MaxAge status is written again")

	clear()
	apply(rendered) // no snapshot among the files: nothing to key on
	assert.NotEmpty(t, exportConds(h, c0, "shop", "cart"), "without the snapshot status is always written")

	// A snapshot in parts: a service is due when its own part, or its
	// part of the report, changed; another service's part is not its.
	dir := layout.InputDir("cluster-a")
	parts := maps.Clone(rendered)
	parts[dir+"cluster.yaml"] = []byte("cluster 1\n")
	parts[dir+"shop/cart.yaml"] = []byte("cart 1\n")
	parts[dir+"shop/other.yaml"] = []byte("other 1\n")
	apply(parts)
	clear()
	parts[dir+"cluster.yaml"] = []byte("cluster 2\n")
	parts[dir+"shop/other.yaml"] = []byte("other 2\n")
	apply(parts)
	assert.Empty(t, exportConds(h, c0, "shop", "cart"), "other parts changed: cart's status not due")
	parts[dir+"shop/cart.yaml"] = []byte("cart 2\n")
	apply(parts)
	assert.NotEmpty(t, exportConds(h, c0, "shop", "cart"), "cart's own part changed: its status is due")

	clear()
	moved := *report
	moved.Services = slices.Clone(report.Services)
	i := slices.IndexFunc(moved.Services, func(s render.ServiceReport) bool { return s.Namespace == "shop" && s.Name == "cart" })
	require.GreaterOrEqual(t, i, 0)
	moved.Services[i].Exports = slices.Clone(moved.Services[i].Exports)
	moved.Services[i].Exports[0].Conditions = slices.Clone(moved.Services[i].Exports[0].Conditions)
	moved.Services[i].Exports[0].Conditions[0].Message += " (again)"
	rs := ApplyAll(ctx, []*Applier{a}, parts, &moved)
	mustOK(t, rs...)
	assert.NotEmpty(t, exportConds(h, c0, "shop", "cart"), "cart's part of the report changed: its status is due")

	var r recorded
	a.Events, a.Change = &r, &change.Set{Services: []change.Service{{Namespace: "shop", Name: "cart", Gained: []string{"cluster-b"}}}}
	mustOK(t, ApplyAll(ctx, []*Applier{a}, parts, &moved)...)
	assert.Equal(t, recorded{"Normal ReachChanged: now reachable from cluster-b"}, r, "nothing of cart changed but its reach: its export's owner is told")
	a.Events, a.Change = nil, nil
	cleanup(h, []*Applier{a})
}

// The remembered contract check answers as contract.Check for the same
// objects, and checks again when one object or the contract is another.
func TestMemoryRemembersTheContractCheck(t *testing.T) {
	files, member := memberFiles(t, 20)
	objs, err := NewBuildCache().Build(files, member)
	require.NoError(t, err)
	m := NewMemory(time.Hour)
	c := contract.Member{Name: member}
	require.Empty(t, m.checkContract(c, objs))
	require.Empty(t, m.checkContract(c, objs), "remembered")

	outside := slices.Clone(objs)
	odd := objs[3].DeepCopy()
	odd.SetLabels(map[string]string{"owner": "someone"})
	outside[3] = odd
	got := m.checkContract(c, outside)
	require.Equal(t, contract.Check(c, outside), got, "one object replaced: checked again")
	require.True(t, slices.ContainsFunc(got, func(v contract.Violation) bool { return v.Index == 3 }), "the replaced object is refused: %v", got)

	require.Empty(t, m.checkContract(c, objs), "back to the first objects")
	withNamespaces := c
	withNamespaces.CreateMissingNamespaces = true
	assert.Equal(t, contract.Check(withNamespaces, outside), m.checkContract(withNamespaces, outside), "another contract: checked again")
}

// Prune looks only at what left the set since the last prune, counting
// what was applied while it had nothing to look at: growing sets leave
// nothing, and a set that drops an object applied in one of them (not
// only one of the set last listed against) names it.
func TestMemoryPrunesWhenAnObjectLeavesTheSet(t *testing.T) {
	key := func(name string) objKey { return objKey{GroupKind: serviceImportGK, Namespace: "ns", Name: name} }
	set := func(names ...string) map[objKey]bool {
		out := map[objKey]bool{}
		for _, n := range names {
			out[key(n)] = true
		}
		return out
	}
	m := NewMemory(time.Hour)
	_, all := m.pruneGone(set("a"))
	require.True(t, all, "nothing pruned yet: list everything")
	m.pruneDone(set("a"))
	for _, step := range []struct {
		keep, gone []string
	}{
		{[]string{"a"}, nil},
		{[]string{"a", "b"}, nil}, // an export added
		{[]string{"a", "b", "c"}, nil},
		{[]string{"a", "c"}, []string{"b"}}, // b, applied after the last listing, left
		{[]string{"a", "c"}, nil},
		{[]string{"c", "d"}, []string{"a"}},
	} {
		keep := set(step.keep...)
		gone, all := m.pruneGone(keep)
		slices.SortFunc(gone, func(x, y objKey) int { return strings.Compare(x.Name, y.Name) })
		var want []objKey
		for _, n := range step.gone {
			want = append(want, key(n))
		}
		assert.False(t, all, "keep %v", step.keep)
		assert.Equal(t, want, gone, "keep %v", step.keep)
		m.pruneDone(keep) // as prune does, whatever it looked at
	}
	m.Forget()
	_, all = m.pruneGone(set("c", "d"))
	assert.True(t, all, "forgotten: list everything")
}
