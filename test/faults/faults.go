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
	"sync"
	"testing"

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
