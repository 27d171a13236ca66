// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// testExportGoneBeforeStatus: an export deleted after the status pass
// listed it and before its status is written is no failure of the member;
// the next cycle's snapshot no longer has it.
func testExportGoneBeforeStatus(h *harness) {
	t := h.t
	ctx := t.Context()
	s, files := scenarioFiles(t, "single-export")
	report, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}
	export := &unstructured.Unstructured{}
	export.SetGroupVersionKind(serviceExportGVK)
	export.SetNamespace("shop")
	export.SetName("cart")
	c0 := h.clusters[0].Client
	if err := c0.Create(ctx, export); err != nil {
		t.Fatal(err)
	}
	a := h.applierFor(0, s.Config, "cluster-a")
	a.Client = deleteAfterList(t, h.clusters[0], "ServiceExportList", export)

	objs, err := Build(files, "cluster-a")
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Apply(ctx, objs, report)
	if err != nil {
		t.Fatalf("an export deleted before its status was written failed the member: %v", err)
	}
	for _, w := range r.StatusWritten {
		if w == "ServiceExport/shop/cart status" {
			t.Errorf("status written for a deleted export: %v", r.StatusWritten)
		}
	}
	if !h.absent(c0, serviceExportGVK, "shop", "cart") {
		t.Error("the export was not deleted: the test did not test anything")
	}
	if _, err := a.Apply(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// deleteAfterList is a client of the cluster that deletes obj right after
// the first list of listKind returns, as a user deleting it at that moment
// would.
func deleteAfterList(t *testing.T, c *envtest.Cluster, listKind string, obj client.Object) client.Client {
	t.Helper()
	base, err := client.NewWithWatch(c.Config, client.Options{Scheme: c.Client.Scheme(), Mapper: c.Client.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	done := false
	return interceptor.NewClient(base, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if !done && list.GetObjectKind().GroupVersionKind().Kind == listKind {
				done = true
				return c.Delete(ctx, obj)
			}
			return nil
		},
	})
}
