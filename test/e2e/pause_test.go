// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestPausedLeaderWritesNothing: two `mcs-gitops run` replicas on a real
// Lease. The leader is paused (SIGSTOP) past the Lease; the other takes
// it over and commits an export made meanwhile. When the old leader
// resumes (SIGCONT) it believes it leads until its elector runs, but its
// fence (the last renewal is older than the renew deadline) lets it push
// and apply nothing: no "git push" and no "applied" line after it
// resumed, and it exits having lost the Lease. The new export stays
// imported. Before the fence, a resumed leader pushed and applied for up
// to 10 s over the new leader's commits, once withdrawing a live export.
// Takes the Lease's 15 s and more: in make test-faults (MCS_FAULTS=1).
func TestPausedLeaderWritesNothing(t *testing.T) {
	if os.Getenv("MCS_FAULTS") == "" {
		t.Skip("SIGSTOPs a leader past its 15 s Lease: make test-faults (MCS_FAULTS=1)")
	}
	binary := buildBinary(t)
	fleet := envtest.Start(t, 3)
	mgmt := fleet[0]
	w := newWorldOn(t, fleet[1:], nil, "    debounce: 50ms\n    minCommitInterval: \"0\"\n")
	ctx := context.Background()
	require.NoError(t, envtest.EnsureNamespaces(ctx, mgmt.Client, "mcs-gitops"))
	mgmtKC := filepath.Join(w.dir, "mgmt.kubeconfig")
	require.NoError(t, mgmt.WriteKubeconfig(mgmtKC))
	// envtest names the apiservers in start order: the first is the
	// management cluster.
	c1, c2 := w.member("cluster-2"), w.member("cluster-3")
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Client, "shop"))
	export(t, c1, "shop", "before", 80, "10.1.0.1")

	replica := func(name string) (*exec.Cmd, *lockedBuffer) {
		cmd := exec.Command(binary, "run", "--config", w.config, "--repo", w.remote,
			"--workdir", filepath.Join(t.TempDir(), name), "--management-kubeconfig", mgmtKC, "--metrics-addr", "127.0.0.1:0")
		var out lockedBuffer
		cmd.Stderr = &out
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGCONT)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		return cmd, &out
	}
	holder := func() string {
		var lease coordinationv1.Lease
		if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "mcs-gitops"}, &lease); err != nil || lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	imported := func(name string) bool { return exists(c2.Client, &mcsv1alpha1.ServiceImport{}, "shop", name) }

	a, aOut := replica("a")
	eventually(t, 30*time.Second, func() bool { return holder() != "" && imported("before") }, "the first replica did not lead and apply")
	first := holder()
	_, bOut := replica("b")
	time.Sleep(2 * time.Second) // b stands by

	require.NoError(t, a.Process.Signal(syscall.SIGSTOP))
	paused := time.Now()
	export(t, c1, "shop", "during", 80, "10.1.0.2")
	eventually(t, 60*time.Second, func() bool { return holder() != "" && holder() != first }, "the other replica did not take the Lease")
	eventually(t, 30*time.Second, func() bool { return imported("during") }, "the new leader did not apply the export made during the pause")
	t.Logf("taken over %s after the pause", time.Since(paused).Round(time.Millisecond))

	mark := aOut.Len()
	require.NoError(t, a.Process.Signal(syscall.SIGCONT))
	done := make(chan error, 1)
	go func() { done <- a.Wait() }()
	select {
	case err := <-done:
		assert.Error(t, err, "the old leader exits having lost the Lease")
	case <-time.After(30 * time.Second):
		t.Fatal("the old leader did not step down within 30 s of resuming")
	}
	after := aOut.String()[mark:]
	for _, line := range strings.Split(after, "\n") {
		assert.NotContains(t, line, `msg="git push"`, "the resumed leader pushed")
		assert.NotContains(t, line, "msg=applied", "the resumed leader applied")
	}
	assert.Contains(t, after, "lost the leader Lease")
	assert.True(t, imported("during"), "the export made during the pause stays imported")
	assert.Contains(t, bOut.String(), `msg="git push"`)
	t.Logf("the resumed leader's log:\n%s", after)
}

// lockedBuffer is what a child process writes while the test reads it.
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

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}
