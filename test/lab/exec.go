// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// kubeletServer is a node's kubelet endpoint, as far as the apiserver uses
// one for `kubectl exec` and `kubectl logs`: /exec/<ns>/<pod>/<container>
// and /containerLogs/<ns>/<pod>/<container>. It listens on the host's
// loopback with a throwaway certificate (the apiserver does not verify a
// kubelet's certificate unless told to) and does not authenticate its
// caller: only the host's own processes can reach it.
type kubeletServer struct {
	n   *node
	srv *http.Server
	l   net.Listener
}

func startKubeletServer(n *node, cert tls.Certificate) (*kubeletServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("node %s: kubelet endpoint: %w", n.name, err)
	}
	k := &kubeletServer{n: n, l: l}
	mux := http.NewServeMux()
	mux.HandleFunc("/exec/{ns}/{pod}/{container}", k.exec)
	mux.HandleFunc("/containerLogs/{ns}/{pod}/{container}", k.logs)
	k.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	n.execPort = l.Addr().(*net.TCPAddr).Port
	go func() { _ = k.srv.ServeTLS(l, "", "") }()
	return k, nil
}

func (k *kubeletServer) close() { _ = k.srv.Close() }

func (k *kubeletServer) container(r *http.Request) (*podRuntime, *container, error) {
	key := r.PathValue("ns") + "/" + r.PathValue("pod")
	k.n.mu.Lock()
	rt := k.n.pods[key]
	k.n.mu.Unlock()
	if rt == nil {
		return nil, nil, fmt.Errorf("pod %s is not running on node %s", key, k.n.name)
	}
	for _, c := range rt.containers {
		if c.spec.Name == r.PathValue("container") {
			return rt, c, nil
		}
	}
	return nil, nil, fmt.Errorf("pod %s has no running container %q", key, r.PathValue("container"))
}

func (k *kubeletServer) exec(w http.ResponseWriter, r *http.Request) {
	rt, _, err := k.container(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()["command"]
	remotecommand.ServeExec(w, r, execIn{rt: rt}, r.PathValue("pod"), string(rt.uid), r.PathValue("container"),
		cmd, opts, 4*time.Hour, 30*time.Second, remotecommand.SupportedStreamingProtocols)
}

func (k *kubeletServer) logs(w http.ResponseWriter, r *http.Request) {
	_, c, err := k.container(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	c.mu.Lock()
	p := c.p
	c.mu.Unlock()
	if p == nil {
		http.Error(w, "container is not running", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, p.out.String())
}

// execIn runs an exec command as a process in the pod's network namespace.
type execIn struct{ rt *podRuntime }

func (e execIn) ExecInContainer(ctx context.Context, _, _, _ string, cmd []string, in io.Reader, out, errw io.WriteCloser,
	tty bool, _ <-chan remotecommand.TerminalSize, timeout time.Duration) error {
	if len(cmd) == 0 {
		return errors.New("no command")
	}
	prog, err := commandProgram(cmd[0])
	if err != nil {
		return err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	argv := append([]string{"netns", "exec", e.rt.netns, prog.bin}, cmd[1:]...)
	c := exec.CommandContext(ctx, "ip", argv...)
	c.Env = append(baseEnv(), prog.env...)
	c.Stdin, c.Stdout, c.Stderr = in, out, errw
	if tty {
		// No pseudo-terminal: a TTY's one output stream, without its line
		// discipline. Clients asking for one (kubectl exec -t, the MCS
		// conformance suite) read the merged output, which is what they
		// compare.
		c.Stderr = out
	}
	err = c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &utilexec.ExitErrorWrapper{ExitError: ee}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(cmd, " "), err)
	}
	return nil
}

// selfSignedCert is the kubelet endpoints' certificate, for 127.0.0.1.
func selfSignedCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcs-gitops-lab-kubelet"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
