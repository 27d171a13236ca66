// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestCrashConsistency kills the controller (a real `mcs-gitops run`
// process, SIGKILL) at random points while the members churn: exports
// come and go, endpoints move. Each restart reuses the work directory as
// a Deployment's volume would. Then the churn stops and one `sync` runs to
// the end. What must hold: no restart is wedged (the final sync exits 0),
// the branch is linear with no empty commit (nothing committed twice), a
// second sync changes nothing, and every member imports exactly the
// services exported at the end. MCS_CRASH_KILLS sets how many kills
// (default 8; make test-faults runs 40); the seed is logged, and
// MCS_CRASH_SEED replays it.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcs-gitops and kills it")
	}
	kills := envInt(t, "MCS_CRASH_KILLS", 8)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MCS_CRASH_SEED"); v != "" {
		seed = uint64(envInt(t, "MCS_CRASH_SEED", 0))
	}
	t.Logf("seed %d (MCS_CRASH_SEED replays the kill times and the churn)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	binary := buildBinary(t)
	// The withdrawal guard is off: a burst of unexports between two kills
	// would be held (as it should), and this test is about convergence.
	w := newWorld(t, 3, "    debounce: 50ms\n    minCommitInterval: \"0\"\n    resyncInterval: 20s\n    withdrawalGuard:\n      minExports: -1\n")
	ctx := context.Background()
	for _, m := range w.members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "churn"))
	}
	workdir := filepath.Join(t.TempDir(), "work")
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(binary, append(args, "--config", w.config, "--repo", w.remote, "--workdir", workdir)...)
		return cmd
	}

	// The churn: every 50-250 ms a member exports a new service, drops an
	// export, or moves an endpoint.
	var mu sync.Mutex
	churnRng := rand.New(rand.NewPCG(seed, 2))
	stop := make(chan struct{})
	churned := make(chan struct{})
	next := 0
	go func() {
		defer close(churned)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(50+churnRng.IntN(200)) * time.Millisecond):
			}
			mu.Lock()
			m := w.members[churnRng.IntN(len(w.members))]
			switch op := churnRng.IntN(3); {
			case op == 0 || next < 3:
				export(t, m, "churn", fmt.Sprintf("svc-%d", next), 80, fmt.Sprintf("10.9.%d.%d", next/250, next%250+1))
				next++
			case op == 1:
				unexport(t, m, "churn", fmt.Sprintf("svc-%d", churnRng.IntN(next)))
			default:
				moveEndpoint(t, m, "churn", fmt.Sprintf("svc-%d", churnRng.IntN(next)), churnRng.IntN(250)+1)
			}
			mu.Unlock()
		}
	}()

	for i := range kills {
		cmd := start("run", "--leader-elect=false", "--metrics-addr", "127.0.0.1:0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		// Up to 4 s: the first cycles (clone, discovery) take 1-2 s, so
		// kills land in start-up, reads, commits, pushes and applies.
		d := time.Duration(rng.IntN(4000)) * time.Millisecond
		time.Sleep(d)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("kill %d: run exited on its own before the kill (%v): %s", i+1, err, stderr.String())
		}
		t.Logf("kill %d after %s", i+1, d)
	}
	close(stop)
	<-churned

	out, err := start("sync").CombinedOutput()
	require.NoError(t, err, "the sync after the last kill: %s", out)
	out, err = start("sync").CombinedOutput()
	require.NoError(t, err, "a second sync: %s", out)
	assert.Contains(t, string(out), "no change", "a second sync changes nothing")

	commits := checkLinear(t, w.remote)
	t.Logf("%d commits on the branch after %d kills", commits, kills)

	var exports []string
	for _, m := range w.members {
		var list mcsv1alpha1.ServiceExportList
		require.NoError(t, m.Client.List(ctx, &list, client.InNamespace("churn")))
		for _, e := range list.Items {
			exports = append(exports, e.Name)
		}
	}
	slices.Sort(exports)
	exports = slices.Compact(exports)
	for _, m := range w.members {
		var list mcsv1alpha1.ServiceImportList
		require.NoError(t, m.Client.List(ctx, &list, client.InNamespace("churn")))
		var imports []string
		for _, i := range list.Items {
			imports = append(imports, i.Name)
		}
		slices.Sort(imports)
		assert.Equal(t, exports, imports, "%s imports what is exported at the end", m.Name)
	}
}

// checkLinear walks the remote's main and fails on a merge or a commit
// that changes nothing; it returns how many commits there are.
func checkLinear(t *testing.T, bare string) int {
	t.Helper()
	r, err := git.PlainOpen(bare)
	require.NoError(t, err)
	ref, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	require.NoError(t, err)
	n := 0
	for h := ref.Hash(); !h.IsZero(); n++ {
		c, err := r.CommitObject(h)
		require.NoError(t, err)
		require.LessOrEqual(t, c.NumParents(), 1, "commit %s is a merge", h)
		if c.NumParents() == 0 {
			break
		}
		p, err := c.Parent(0)
		require.NoError(t, err)
		assert.NotEqual(t, p.TreeHash, c.TreeHash, "commit %s changes nothing: committed twice?", h)
		h = p.Hash
	}
	return n + 1
}

// buildBinary builds mcs-gitops into the test's directory.
func buildBinary(t testing.TB) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "mcs-gitops")
	out, err := exec.Command("go", "build", "-o", binary, "github.com/mcs-gitops/mcs-gitops/cmd/mcs-gitops").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return binary
}

func envInt(t testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s", name)
	return n
}

// moveEndpoint gives the slice export made for ns/name in m the address
// 10.8.0.<host>, when m has it.
func moveEndpoint(t *testing.T, m *envtest.Cluster, ns, name string, host int) {
	t.Helper()
	var sl discoveryv1.EndpointSlice
	err := m.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name + "-" + m.Name}, &sl)
	if apierrors.IsNotFound(err) {
		return
	}
	require.NoError(t, err)
	if len(sl.Endpoints) == 0 {
		return
	}
	sl.Endpoints[0].Addresses = []string{fmt.Sprintf("10.8.0.%d", host)}
	require.NoError(t, m.Client.Update(context.Background(), &sl))
}
