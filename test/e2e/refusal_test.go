// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestOneRefusedObjectDoesNotStopTheMember: cluster-2 refuses one rendered
// object (an admission policy denies catalog's derived Service). The cycle
// commits, every other import in cluster-2 is created and later updated,
// the refusal is a member problem of the cycle (exit 1) naming the member,
// the object and the apiserver's message, and catalog's export says so in
// its status in cluster-1. `apply --ref` reports it the same way.
func TestOneRefusedObjectDoesNotStopTheMember(t *testing.T) {
	w := newWorld(t, 2, "")
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	export(t, c1, "shop", "catalog", 80, "10.1.0.11")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	denied := render.DerivedServiceName("shop", "catalog")
	const why = "tenant quota: no more Services in shop"
	allow, err := envtest.DenyService(ctx, c2.Client, "shop", denied, why)
	require.NoError(t, err)

	out, err := w.loop.Sync(ctx)
	var partial *reconcile.PartialError
	require.True(t, errors.As(err, &partial), "a refused object is a member problem: %v", err)
	require.True(t, out.Committed)
	require.Len(t, partial.Failed, 1)
	assert.Contains(t, partial.Failed[0], "cluster-2: not applied: Service/shop/"+denied)
	assert.Contains(t, partial.Failed[0], why, "the apiserver's own message")

	cartSvc := &corev1.Service{}
	assert.True(t, exists(c2.Client, cartSvc, "shop", render.DerivedServiceName("shop", "cart")), "cart is still imported in cluster-2")
	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "catalog"), "catalog's ServiceImport is applied")
	assert.False(t, exists(c2.Client, &corev1.Service{}, "shop", denied))

	se := &mcsv1alpha1.ServiceExport{}
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "catalog"}, se))
	ready := conditionOf(se, "Ready")
	assert.Equal(t, "False", string(ready.Status))
	assert.Contains(t, ready.Message, "cluster-2 did not take Service/shop/"+denied)
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, se))
	assert.Equal(t, "True", string(conditionOf(se, "Ready").Status))

	// cart changes; the refusal still does not hold it up.
	unexport(t, c1, "shop", "cart")
	_, err = w.loop.Sync(ctx)
	require.True(t, errors.As(err, &partial))
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "cart's import is pruned in cluster-2")

	head, _ := w.remoteHead()
	results, err := w.loop.ApplyRef(ctx, plumbing.NewHash(head), false)
	require.True(t, errors.As(err, &partial), "apply --ref reports the refusal: %v", err)
	assert.True(t, strings.Contains(partial.Error(), why), partial.Error())
	require.Len(t, results, 2)

	require.NoError(t, allow(ctx))
	out = w.sync()
	assert.Empty(t, out.FailedMembers())
	assert.True(t, exists(c2.Client, &corev1.Service{}, "shop", denied), "applied once allowed")
	si := &mcsv1alpha1.ServiceImport{}
	require.True(t, exists(c2.Client, si, "shop", "catalog"))
	assert.NotEmpty(t, si.Spec.IPs, "the import, unchanged itself, gets the IPs of its derived Service once that is taken")
}

func conditionOf(se *mcsv1alpha1.ServiceExport, typ string) metav1.Condition {
	for _, c := range se.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// TestUnloadableObjectIsReportedNotFatal: a tenant's ServiceExport that the
// apiserver accepted but no ServiceImport could carry (an exportedLabels
// key that is not a label key) costs that export only: the cycle commits
// and applies everything else, exits as a member problem naming the
// object and field, and the export says why on its status.
func TestUnloadableObjectIsReportedNotFatal(t *testing.T) {
	w := newWorld(t, 2, "")
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	export(t, c1, "shop", "cart", 80, "10.1.0.10")
	export(t, c1, "shop", "odd", 80, "10.1.0.11")
	se := &mcsv1alpha1.ServiceExport{}
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "odd"}, se))
	se.Spec.ExportedLabels = map[string]string{"team/a/b": "x"}
	require.NoError(t, c1.Client.Update(ctx, se))
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))

	out, err := w.loop.Sync(ctx)
	var partial *reconcile.PartialError
	require.True(t, errors.As(err, &partial), "an object that does not load is a member problem: %v", err)
	require.True(t, out.Committed)
	require.Len(t, partial.Failed, 1)
	assert.Contains(t, partial.Failed[0], "cluster-1: cannot load ServiceExport shop/odd")
	assert.Contains(t, partial.Failed[0], `spec.exportedLabels["team/a/b"]`)
	assert.True(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "cart"), "the rest is imported")
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", "odd"))

	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "odd"}, se))
	valid := conditionOf(se, "Valid")
	assert.Equal(t, "False", string(valid.Status))
	assert.Equal(t, "Unloadable", valid.Reason)
	assert.Contains(t, valid.Message, "team/a/b")
}
