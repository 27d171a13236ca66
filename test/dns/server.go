// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	"k8s.io/client-go/rest"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

const (
	// ClusterSetZone is the KEP-1645 zone ServiceImports resolve in.
	ClusterSetZone = "clusterset.local"

	// startTimeout bounds one start attempt: process start, informer sync
	// (the kubernetes plugin's startup_timeout is 30 s) and the first answer.
	// Generous because tests share two cores with apiservers.
	startTimeout = 90 * time.Second
	// startAttempts retries when a port picked as free was taken before
	// CoreDNS bound it.
	startAttempts = 3
	// stopTimeout is how long CoreDNS gets to exit after an interrupt before
	// it is killed.
	stopTimeout = 10 * time.Second
	// outputTail bounds the CoreDNS output kept for failure messages.
	outputTail = 32 << 10
)

// Start runs CoreDNS against the apiserver cfg reaches and returns its DNS
// address ("127.0.0.1:port", UDP and TCP). The kubernetes plugin is
// authoritative for cluster.local and zone ("" means ClusterSetZone) and
// serves zone from ServiceImports (multicluster.x-k8s.io/v1alpha1) and from
// EndpointSlices labelled multicluster.kubernetes.io/service-name. Start
// returns once the plugin's informers have synced and the zone's SOA answers.
// The Corefile, the kubeconfig (mode 0600) and CoreDNS's output live in
// t.TempDir(); the process is stopped at cleanup, and its output is logged if
// t failed. A missing binary skips t outside CI and fails it in CI (Require).
func Start(t testing.TB, cfg *rest.Config, zone string) (addr string) {
	t.Helper()
	bin := Require(t)
	if zone == "" {
		zone = ClusterSetZone
	}
	zone = strings.TrimSuffix(strings.ToLower(zone), ".")
	if zone == "cluster.local" || zone == "" {
		t.Fatalf("dns.Start: zone %q: the multicluster zone must differ from cluster.local", zone)
	}
	dir := t.TempDir()
	kubeconfig, err := writeKubeconfig(cfg, dir)
	if err != nil {
		t.Fatalf("dns.Start: %v", err)
	}

	for attempt := 1; ; attempt++ {
		s, err := launch(bin, dir, zone, kubeconfig)
		if err != nil {
			t.Fatalf("dns.Start: %v", err)
		}
		t.Cleanup(func() {
			s.stop()
			if t.Failed() {
				t.Logf("coredns %s output (last %d bytes):\n%s", s.addr, outputTail, s.out.String())
			}
		})
		err = s.waitReady(zone)
		if err == nil {
			t.Logf("coredns serving %s and cluster.local on %s (Corefile %s)", zone, s.addr, s.corefile)
			return s.addr
		}
		s.stop()
		if attempt < startAttempts && strings.Contains(s.out.String(), "address already in use") {
			t.Logf("coredns: port taken before it could bind (%v); retrying with new ports", err)
			continue
		}
		t.Fatalf("dns.Start: coredns did not become ready: %v\nits output:\n%s", err, s.out.String())
	}
}

// server is one CoreDNS process.
type server struct {
	addr, readyURL, corefile string
	cmd                      *exec.Cmd
	out                      *envtest.TailBuffer
	done                     chan struct{} // closed when the process has exited
	waitErr                  error         // valid after done is closed
	stopOnce                 sync.Once
}

func launch(bin, dir, zone, kubeconfig string) (*server, error) {
	dnsPort, err := freePort(true)
	if err != nil {
		return nil, err
	}
	readyPort, err := freePort(false)
	if err != nil {
		return nil, err
	}
	corefilePath := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(corefilePath, []byte(corefile(zone, kubeconfig, dnsPort, readyPort)), 0o600); err != nil {
		return nil, fmt.Errorf("writing Corefile: %w", err)
	}
	s := &server{
		addr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(dnsPort)),
		readyURL: fmt.Sprintf("http://127.0.0.1:%d/ready", readyPort),
		corefile: corefilePath,
		out:      &envtest.TailBuffer{Limit: outputTail},
		done:     make(chan struct{}),
	}
	s.cmd = exec.Command(bin, "-conf", corefilePath)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	// The Corefile names the kubeconfig; nothing should come from the
	// environment of whoever runs the tests.
	s.cmd.Env = filterEnv(os.Environ(), "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// waitReady polls the ready plugin until every plugin (the kubernetes
// plugin: all informers synced) reports ready, then until the zone's SOA
// answers, so the first query a test sends is served from a synced cache.
func (s *server) waitReady(zone string) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	httpc := &http.Client{Timeout: 2 * time.Second}
	var last error = errors.New("not polled yet")
	ready := false
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return fmt.Errorf("coredns exited: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %v", startTimeout, last)
		case <-tick.C:
		}
		if !ready {
			resp, err := httpc.Get(s.readyURL)
			if err != nil {
				last = fmt.Errorf("ready endpoint: %w", err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				last = fmt.Errorf("ready endpoint: %s", resp.Status)
				continue
			}
			ready = true
		}
		m, err := Query(ctx, s.addr, zone, mdns.TypeSOA)
		if err != nil {
			last = err
			continue
		}
		if m.Rcode != mdns.RcodeSuccess {
			last = fmt.Errorf("SOA %s: %s", zone, mdns.RcodeToString[m.Rcode])
			continue
		}
		return nil
	}
}

// stop interrupts CoreDNS, and kills it if it has not exited after
// stopTimeout. Safe to call more than once.
func (s *server) stop() {
	s.stopOnce.Do(func() {
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// freePort returns a localhost port that is free for TCP and, with udp, for
// UDP too. Another process may take it before CoreDNS binds it; Start retries.
func freePort(udp bool) (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !udp {
			l.Close()
			return port, nil
		}
		pc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		l.Close()
		if err != nil {
			continue
		}
		pc.Close()
		return port, nil
	}
	return 0, errors.New("finding a free port: no port free for both TCP and UDP after 20 tries")
}

func filterEnv(env []string, drop ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, d := range drop {
			if strings.HasPrefix(kv, d+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
