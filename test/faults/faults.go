// SPDX-License-Identifier: Apache-2.0

// Package faults builds, for tests, the failures members show in the
// field that a real apiserver cannot be made to show on demand. It owns
// no Kubernetes logic and must not stand in for an apiserver that
// answers: tests that need answers use envtest.
package faults

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// BlackHole is a TCP address that accepts connections and never says a
// word, not even a TLS handshake: a hung apiserver, or a firewall that
// lets the connection in and drops everything after. Connections close
// when the test ends.
func BlackHole(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// NeverAnswers is a client config for an HTTPS endpoint that completes
// the TLS handshake, reads each request and never answers it, like a load
// balancer in front of an apiserver that hangs. TLS verification is off
// (the certificate is the test server's); the endpoint stops when the
// test ends.
func NeverAnswers(t testing.TB) *rest.Config {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	// Cleanups run last first: the held requests end before Close
	// waits for them.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
}

// SlowWrites is a client config for a proxy in front of the apiserver cfg
// reaches that holds every write (POST, PUT, PATCH, DELETE) for delay
// before passing it on, reads untouched: a member whose etcd is slow, or
// whose admission webhooks take their time. The proxy speaks plain HTTP
// and authenticates upstream as cfg; it stops when the test ends.
func SlowWrites(t testing.TB, cfg *rest.Config, delay time.Duration) *rest.Config {
	t.Helper()
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.Transport = transport
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}
