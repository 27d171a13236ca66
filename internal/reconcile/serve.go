// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Probes back /healthz and /readyz. The process is ready once it either
// leads and has finished a cycle, or stands by as a follower. It is live
// unless, while it leads, no cycle has completed within the limit Run
// sets: a cycle wedged on something that ignores its deadline would
// otherwise hold the Lease forever, and only a restart frees it. A
// follower has no cycle to wait for, so it stays live.
type Probes struct {
	ready atomic.Bool
	// Now is the clock; tests pin it. Defaults to time.Now.
	Now func() time.Time

	mu      sync.Mutex
	leading bool
	limit   time.Duration
	// last is when a cycle last completed, or when leading started.
	last time.Time
}

// SetReady flips /readyz.
func (p *Probes) SetReady(v bool) { p.ready.Store(v) }

// lead starts the liveness watch: from now on a cycle must complete
// within limit. A zero limit watches nothing.
func (p *Probes) lead(limit time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leading, p.limit, p.last = limit > 0, limit, p.now()
}

// cycled records that a cycle completed, whatever its outcome.
func (p *Probes) cycled() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = p.now()
}

// standBy ends the liveness watch.
func (p *Probes) standBy() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leading = false
}

// wedged says why the process is not live, or "" when it is.
func (p *Probes) wedged() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.leading {
		return ""
	}
	if since := p.now().Sub(p.last); since > p.limit {
		return fmt.Sprintf("not live: leading, and no cycle has completed for %s (limit %s, see --liveness-cycles)\n",
			since.Round(time.Second), p.limit)
	}
	return ""
}

func (p *Probes) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Serve exposes /metrics, /healthz and /readyz on addr until ctx ends,
// then shuts the server down gracefully. It returns the bound address
// once listening, so ":0" works in tests.
func Serve(ctx context.Context, addr string, m *Metrics, probes *Probes) (string, <-chan error, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if why := probes.wedged(); why != "" {
			http.Error(w, why, http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !probes.ready.Load() {
			http.Error(w, "not ready: first cycle not finished\n", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), done, nil
}
