package apply

import (
	"testing"
	"time"

	"github.com/mcs-gitops/mcs-gitops/layout"
	"github.com/stretchr/testify/assert"
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
	cleanup(h, []*Applier{a})
}

// An Applier without a Memory (apply --ref) must report an apply error as
// the apiserver's message; forgetting nothing must not panic.
func TestNilMemoryForgets(t *testing.T) {
	var m *Memory
	assert.NotPanics(t, m.Forget)
}
