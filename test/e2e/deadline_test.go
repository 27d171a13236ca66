// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/faults"
)

// TestSlowMemberDoesNotFailTheOthers: one member answers every write 2 s
// late. Its apply is cut at its own deadline (memberTimeout plus 100 ms
// per object it is sent, on top of three memberTimeouts) and reported as a timeout, none of its objects
// as refused; the healthy member is applied in full and its status
// written, and the cycle ends soon after the slow member's deadline.
// Under one deadline for the whole cycle, the slow member used it up and
// the healthy member's status writes failed with it; with none (sync),
// the cycle waited for every slow write.
func TestSlowMemberDoesNotFailTheOthers(t *testing.T) {
	w := newWorld(t, 2, "")
	ctx := context.Background()
	healthy, slow := w.member("cluster-1"), w.member("cluster-2")
	const services = 20
	for i := range services {
		export(t, healthy, "shop", fmt.Sprintf("svc-%d", i), 80, fmt.Sprintf("10.1.0.%d", i+1))
	}
	// The importer has the namespace: imports go only where it exists.
	require.NoError(t, envtest.EnsureNamespaces(ctx, slow.Client, "shop"))
	proxied := faults.SlowWrites(t, slow.Config, 2*time.Second)
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: slow\n  cluster: {server: %q}\n"+
		"contexts:\n- name: slow\n  context: {cluster: slow, user: slow}\ncurrent-context: slow\nusers:\n- name: slow\n  user: {}\n", proxied.Host)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "cluster-2.kubeconfig"), []byte(kubeconfig), 0o600))
	w.loop = w.newLoop(filepath.Join(t.TempDir(), "clone"))

	start := time.Now()
	out, err := w.loop.Sync(ctx)
	took := time.Since(start)
	var partial *reconcile.PartialError
	require.True(t, errors.As(err, &partial), "want a partial failure naming the slow member, got %v", err)
	require.Len(t, partial.Failed, 1, "only the slow member failed: %v", partial.Failed)
	assert.Contains(t, partial.Failed[0], "cluster-2: apply:")
	assert.Contains(t, partial.Failed[0], "did not finish in time")
	assert.NotContains(t, strings.Join(partial.Failed, "\n"), "not applied:", "a deadline is not a refusal")
	for _, r := range out.Applied {
		if r.Member == "cluster-2" {
			assert.Empty(t, r.Refused, "a deadline is not a refusal")
		}
	}
	// memberTimeout is 3 s: the slow member gets 9 s plus 100 ms for each
	// of its 60 objects (per service an import, a derived Service and a
	// slice), 15 s, then the healthy member's status writes.
	assert.Less(t, took, 30*time.Second, "the cycle waited for the slow member")
	t.Logf("cycle with a slow member: %s", took.Round(time.Millisecond))

	var imports mcsv1alpha1.ServiceImportList
	require.NoError(t, healthy.Client.List(ctx, &imports, client.InNamespace("shop")))
	assert.Len(t, imports.Items, services, "the healthy member is applied in full")
	var exp mcsv1alpha1.ServiceExport
	require.NoError(t, healthy.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "svc-0"}, &exp))
	assert.NotEmpty(t, exp.Status.Conditions, "and its status written")
}
