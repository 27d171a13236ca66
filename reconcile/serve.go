package reconcile

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Probes back /healthz and /readyz. The process is live as long as it
// serves; it is ready once it either leads and has finished a cycle, or
// stands by as a follower.
type Probes struct{ ready atomic.Bool }

// SetReady flips /readyz.
func (p *Probes) SetReady(v bool) { p.ready.Store(v) }

// Serve exposes /metrics, /healthz and /readyz on addr until ctx ends,
// then shuts the server down gracefully. It returns the bound address
// once listening, so ":0" works in tests.
func Serve(ctx context.Context, addr string, m *Metrics, probes *Probes) (string, <-chan error, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
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
