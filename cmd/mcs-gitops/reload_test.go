// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/internal/member/join"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// lockedBuffer is the command's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunFollowsConfigAndSecrets: `run` picks up, without a restart, a
// member added to its config whose Secret does not exist yet, then that
// Secret when `member join` writes it, then a rotated token.
func TestRunFollowsConfigAndSecrets(t *testing.T) {
	defer func(d time.Duration) { configPoll = d }(configPoll)
	configPoll = 100 * time.Millisecond
	cs := envtest.Start(t, 3)
	mgmt, east, west := cs[0], cs[1], cs[2]
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, mgmt.Client, "mcs-gitops"))
	require.NoError(t, mgmt.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mcs-gitops", Name: join.ManagementRole},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"none"}, Verbs: []string{"get", "watch"}}},
	}))
	dir := t.TempDir()
	require.NoError(t, mgmt.WriteKubeconfig(filepath.Join(dir, "mgmt.kubeconfig")))
	require.NoError(t, east.WriteKubeconfig(filepath.Join(dir, "east.kubeconfig")))
	remote := filepath.Join(dir, "remote.git")
	_, err := git.PlainInit(remote, true)
	require.NoError(t, err)
	config := filepath.Join(dir, "clusterset.yaml")
	head := "apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: t\nspec:\n  members:\n" +
		"  - name: east\n    kubeconfig: {path: east.kubeconfig}\n"
	tail := "  sync:\n    memberTimeout: 3s\n    debounce: 50ms\n    minCommitInterval: 100ms\n"
	require.NoError(t, os.WriteFile(config, []byte(head+tail), 0o644))

	require.NoError(t, envtest.EnsureNamespaces(ctx, east.Client, "shop"))
	svc := tenant.Service("shop", "cart", tenant.Port("http", 80, 8080))
	tenant.Create(t, east.Client, svc, tenant.Slice(svc, "cart-east", discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.10")...), tenant.Export("shop", "cart"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, west.Client, "shop"))

	rctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"run", "--config", config, "--repo", remote, "--workdir", filepath.Join(dir, "work"),
			"--management-kubeconfig", filepath.Join(dir, "mgmt.kubeconfig"), "--leader-elect=false", "--metrics-addr", "127.0.0.1:0"})
		done <- cmd.ExecuteContext(rctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("run did not stop")
		}
	})
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s; run's output:\n%s", what, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("the first cycle never committed", func() bool { return strings.Contains(out.String(), "committed") })

	// west joins the config before its Secret exists.
	westMember := "  - name: west\n    kubeconfig:\n      secretRef: {namespace: mcs-gitops, name: west-kubeconfig}\n"
	require.NoError(t, os.WriteFile(config, []byte(head+westMember+tail), 0o644))
	waitFor("the new member was not picked up", func() bool {
		return strings.Contains(out.String(), "Secret mcs-gitops/west-kubeconfig does not exist")
	})

	// member join writes the Secret: west gets the import.
	var jout bytes.Buffer
	_, err = join.Join(ctx, join.Options{Member: "west", Admin: west.Config, Management: mgmt.Client, Out: &jout})
	require.NoError(t, err, jout.String())
	imported := func() bool {
		return west.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &mcsv1alpha1.ServiceImport{}) == nil
	}
	waitFor("the joined member never got its import", imported)
	assert.Contains(t, out.String(), "Secret mcs-gitops/west-kubeconfig changed")

	// A rotation is followed too, and the loop goes on with the new token.
	reloads := strings.Count(out.String(), "reloading")
	_, err = join.Join(ctx, join.Options{Member: "west", Admin: west.Config, Management: mgmt.Client, Rotate: true, Out: &jout})
	require.NoError(t, err)
	waitFor("the rotated Secret was not picked up", func() bool { return strings.Count(out.String(), "reloading") > reloads })
	// A member whose kubeconfig file does not exist is a mistake in the new
	// config, not an outage to commit: the running config is kept, and the
	// loop goes on with it.
	require.NoError(t, os.WriteFile(config, []byte(head+westMember+
		"  - name: typo\n    kubeconfig: {path: nowhere.kubeconfig}\n"+tail), 0o644))
	waitFor("the config naming a missing kubeconfig was not refused", func() bool {
		return strings.Contains(out.String(), "running on the previous one") && strings.Contains(out.String(), "nowhere.kubeconfig does not exist")
	})
	require.NoError(t, east.Client.Delete(ctx, &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"}}))
	waitFor("the unexport never reached west", func() bool { return !imported() })
}
