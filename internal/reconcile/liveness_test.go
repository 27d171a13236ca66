// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// While this replica leads, /healthz fails once no cycle has completed
// for the liveness limit, saying so, and passes again once one completes.
// The cycle is held by a member whose apiserver accepts every request and
// never answers until the test lets it; the probes' clock is pinned, so
// "too long" is a step of the clock, not a wait. A follower, and a leader
// that stopped, stay live.
func TestLivenessFailsWhileACycleIsWedged(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	asked := make(chan struct{}, 1)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "gone", http.StatusServiceUnavailable)
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(unblock)

	cfg, err := v1alpha1.Parse("clusterset.yaml", []byte(`apiVersion: mcs-gitops.io/v1alpha1
kind: ClusterSet
metadata:
  name: t
spec:
  members:
  - name: hung
    kubeconfig:
      path: unused.kubeconfig
  sync:
    memberTimeout: 1h
    resyncInterval: 1h
`))
	require.NoError(t, err)
	members, err := clusters.NewSet(&clusters.Member{Name: "hung", Config: &rest.Config{Host: hung.URL}})
	require.NoError(t, err)
	l := benchLoop(t, cfg)
	l.Members, l.Now = members, nil

	var clockMu sync.Mutex
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	step := func(d time.Duration) {
		clockMu.Lock()
		defer clockMu.Unlock()
		now = now.Add(d)
	}
	probes := &Probes{Now: func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		return now
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, served, err := Serve(ctx, "127.0.0.1:0", NewMetrics(), probes)
	require.NoError(t, err)
	healthz := func() (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/healthz")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}

	step(24 * time.Hour)
	code, _ := healthz()
	assert.Equal(t, http.StatusOK, code, "not leading: live however long since anything")

	// 3 resyncs of 1h, but a cycle may take its publish deadline (4
	// memberTimeouts), a read (one) and an apply's fixed part (three):
	// the limit is one resync plus that, 9h.
	cycles := make(chan error, 4)
	runCtx, stopRun := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- l.Run(runCtx, RunOptions{Probes: probes, LivenessCycles: 3, OnCycle: func(_ *Outcome, err error) { cycles <- err }})
	}()
	<-asked // Run has started leading, and reading or watching the member
	step(9 * time.Hour)
	code, body := healthz()
	assert.Equal(t, http.StatusOK, code, "at the limit: %s", body)

	step(time.Second)
	code, body = healthz()
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, body, "no cycle has completed for 9h0m1s (limit 9h0m0s")

	select {
	case <-cycles:
		t.Fatal("the cycle completed while the member hung")
	default:
	}
	unblock()
	<-cycles // the member's read fails; the cycle completes all the same
	code, body = healthz()
	assert.Equal(t, http.StatusOK, code, "after a completed cycle: %s", body)

	stopRun()
	require.NoError(t, <-ran)
	step(24 * time.Hour)
	code, _ = healthz()
	assert.Equal(t, http.StatusOK, code, "no longer leading")
	cancel()
	require.NoError(t, <-served)
}

// The limit is the multiple of resyncInterval, but never shorter than one
// resync plus a whole cycle; zero cycles turn the check off.
func TestLivenessLimit(t *testing.T) {
	assert.Equal(t, 15*time.Minute, livenessLimit(3, 5*time.Minute, 40*time.Second))
	assert.Equal(t, 10*time.Minute+40*time.Second, livenessLimit(1, 10*time.Minute, 40*time.Second))
	assert.Zero(t, livenessLimit(0, 5*time.Minute, 40*time.Second))
	p := &Probes{}
	p.lead(0)
	p.Now = func() time.Time { return time.Now().Add(100 * 24 * time.Hour) }
	assert.Empty(t, p.wedged(), "disabled")
}
