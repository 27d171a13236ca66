// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// TestLineageRefusesRewriteInFreshClone is the CronJob's case: every run
// clones afresh and remembers nothing, so before the record it took a
// force-pushed branch as the truth. With the record in the management
// cluster it refuses it (exit 3, an Event on the record), until a person
// runs lineage accept, which names them.
func TestLineageRefusesRewriteInFreshClone(t *testing.T) {
	cs := envtest.Start(t, 2)
	mgmt, east := cs[0], cs[1]
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, mgmt.Client, "mcs-gitops"))
	dir := t.TempDir()
	mgmtKC := filepath.Join(dir, "mgmt.kubeconfig")
	require.NoError(t, mgmt.WriteKubeconfig(mgmtKC))
	require.NoError(t, east.WriteKubeconfig(filepath.Join(dir, "east.kubeconfig")))
	remote := filepath.Join(dir, "remote.git")
	_, err := git.PlainInit(remote, true)
	require.NoError(t, err)
	config := filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(config, []byte("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: t\nspec:\n  members:\n"+
		"  - name: east\n    kubeconfig: {path: east.kubeconfig}\n  sync:\n    memberTimeout: 5s\n"), 0o644))
	require.NoError(t, envtest.EnsureNamespaces(ctx, east.Client, "shop"))
	svc := tenant.Service("shop", "cart", tenant.Port("http", 80, 8080))
	tenant.Create(t, east.Client, svc, tenant.Slice(svc, "cart-east", discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.10")...), tenant.Export("shop", "cart"))

	pod := 0
	sync := func() (string, error) {
		pod++ // a new pod, a new empty clone directory
		return run(t, "sync", "--config", config, "--repo", remote, "--workdir", filepath.Join(dir, "pod", string(rune('a'+pod))),
			"--management-kubeconfig", mgmtKC)
	}
	out, err := sync()
	require.NoError(t, err, out)
	pushed := remoteHead(t, remote)

	out, err = run(t, "lineage", "show", "--management-kubeconfig", mgmtKC)
	require.NoError(t, err)
	assert.Contains(t, out, "record:     ConfigMap mcs-gitops/mcs-gitops-lineage")
	assert.Contains(t, out, "commit:     "+pushed.String())
	assert.Contains(t, out, "members:    east")

	orphan := forcePushOrphan(t, remote)
	out, err = sync()
	assert.Equal(t, 3, exitCode(err), "output: %s", out)
	assert.ErrorContains(t, err, "was rewritten")
	assert.ErrorContains(t, err, "mcs-gitops lineage accept")
	assert.Equal(t, orphan, remoteHead(t, remote), "nothing is pushed on a refused branch")
	var evs eventsv1.EventList
	require.NoError(t, mgmt.Client.List(ctx, &evs, client.InNamespace("mcs-gitops")))
	require.NotEmpty(t, evs.Items)
	assert.Equal(t, "BranchRefused", evs.Items[0].Reason)
	assert.Contains(t, evs.Items[0].Note, "was rewritten")

	_, err = run(t, "lineage", "accept", "--management-kubeconfig", mgmtKC)
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "--reason is required")
	out, err = run(t, "lineage", "accept", "--management-kubeconfig", mgmtKC, "--reason", "we restored the repository")
	require.NoError(t, err)
	assert.Contains(t, out, "commit:     (none")
	assert.Contains(t, out, "replacing "+pushed.String()+": we restored the repository")
	var cm corev1.ConfigMap
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "mcs-gitops-lineage"}, &cm))
	assert.NotEmpty(t, cm.Annotations["mcs-gitops.io/accepted-by"], "the management cluster named who accepted")

	out, err = sync()
	require.NoError(t, err, out)
	assert.Contains(t, out, "committed")
	after := remoteHead(t, remote)
	require.NoError(t, mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "mcs-gitops-lineage"}, &cm))
	assert.Equal(t, after.String(), cm.Data["commit"], "the record starts again from the accepted branch")
	assert.Equal(t, "we restored the repository", cm.Annotations["mcs-gitops.io/accepted-reason"], "and keeps the acceptance")
}

// forcePushOrphan force-pushes a commit with no parent and one file to
// the remote's main, as someone rewriting the branch does.
func forcePushOrphan(t *testing.T, bare string) plumbing.Hash {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("start again\n"), 0o644))
	wt, err := r.Worktree()
	require.NoError(t, err)
	_, err = wt.Add("README")
	require.NoError(t, err)
	h, err := wt.Commit("start again", &git.CommitOptions{Author: &object.Signature{Name: "someone", Email: "s@example.com", When: time.Now()}})
	require.NoError(t, err)
	require.NoError(t, r.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", h)))
	_, err = r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{bare}})
	require.NoError(t, err)
	require.NoError(t, r.Push(&git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{"+refs/heads/main:refs/heads/main"}}))
	return h
}
