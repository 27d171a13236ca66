// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestDiffShowsTheNextCommitAndWritesNothing: diff reports what the next
// sync would commit, and neither commits, writes the worktree nor applies.
func TestDiffShowsTheNextCommitAndWritesNothing(t *testing.T) {
	w := newWorld(t, 2, "")
	ctx := context.Background()
	c1, c2 := w.member("cluster-1"), w.member("cluster-2")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "httpbin"))
	w.sync()
	head, _ := w.remoteHead()

	p, err := w.loop.Diff(ctx)
	require.NoError(t, err)
	assert.True(t, p.Empty(), "nothing changed: %s", p.Patch)

	export(t, c1, "httpbin", "httpbin", 80, "10.1.0.10")
	p, err = w.loop.Diff(ctx)
	require.NoError(t, err)
	assert.False(t, p.Empty())
	assert.Contains(t, p.Message, "cluster-1 exports httpbin/httpbin to cluster-2")
	assert.Contains(t, p.Patch, "+++ b/clusters/cluster-2/httpbin/httpbin/serviceimport.yaml")

	h, _ := w.remoteHead()
	assert.Equal(t, head, h, "diff does not commit or push")
	_, err = os.Stat(filepath.Join(w.loop.Repo.Dir(), "clusters", "cluster-2", "httpbin"))
	assert.True(t, os.IsNotExist(err), "diff does not write the worktree")
	assert.False(t, exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "httpbin", "httpbin"), "diff does not apply")
}
