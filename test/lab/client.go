// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// Client sends requests from inside a running pod's network namespace, as
// a process in that pod would: names resolve through the member's kube-dns
// Service (the pod's resolv.conf), so ClusterSet names and IPs go through
// the member's CoreDNS and kube-proxy like any pod's traffic. Use FQDNs
// (the client does not apply the pod's search path).
type Client struct {
	netns  string
	dns    []netip.Addr
	member string
	pod    string
	http   *http.Client
}

// PodClient returns a client for a pod of the member that runs on its node.
func (m *Member) PodClient(namespace, pod string) (*Client, error) {
	key := namespace + "/" + pod
	m.node.mu.Lock()
	rt := m.node.pods[key]
	m.node.mu.Unlock()
	if rt == nil || rt.slot == 0 {
		return nil, fmt.Errorf("cluster %q: pod %s is not running on %s", m.Name, key, m.NodeName)
	}
	c := &Client{netns: rt.netns, dns: m.DNSIPs, member: m.Name, pod: key}
	c.http = &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		// One connection per request, as separate clients: kube-proxy
		// balances connections.
		DisableKeepAlives: true,
		DialContext:       c.DialContext,
	}}
	return c, nil
}

// resolver resolves through the member's DNS Service, from the pod.
func (c *Client) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialIn(ctx, c.netns, network, netip.AddrPortFrom(c.dns[0], 53).String())
	}}
}

// LookupIP resolves a name as the pod would.
func (c *Client) LookupIP(ctx context.Context, host string) ([]netip.Addr, error) {
	return c.resolver().LookupNetIP(ctx, "ip", host)
}

// DialContext connects from the pod to addr, resolving a name first; with
// several addresses it tries them in order.
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return dialIn(ctx, c.netns, network, net.JoinHostPort(ip.String(), port))
	}
	ips, err := c.LookupIP(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("from %s in %s: %w", c.pod, c.member, err)
	}
	var last error
	for _, ip := range ips {
		conn, err := dialIn(ctx, c.netns, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, fmt.Errorf("from %s in %s: %w", c.pod, c.member, last)
}

// Get sends one GET on a new connection and returns the body of a 200.
func (c *Client) Get(ctx context.Context, url string) (string, error) {
	body, err := get(ctx, c.http, url)
	if err != nil {
		return "", fmt.Errorf("from %s in %s: %w", c.pod, c.member, err)
	}
	return body, nil
}

// Exec runs a command in a pod's container through the member's apiserver
// and the node's kubelet endpoint, as `kubectl exec` does, and returns its
// stdout and stderr.
func (m *Member) Exec(ctx context.Context, namespace, pod, container string, cmd ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = Exec(ctx, m.Config, namespace, pod, container, nil, &out, &errb, cmd...)
	if err != nil {
		err = fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	return out.String(), errb.String(), err
}

// Exec runs a command in a pod's container through the apiserver cfg
// reaches, streaming its output, as `kubectl exec` does.
func Exec(ctx context.Context, cfg *rest.Config, namespace, pod, container string, stdin io.Reader, stdout, stderr io.Writer, cmd ...string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return err
	}
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr}); err != nil {
		return fmt.Errorf("exec in %s/%s: %w", namespace, pod, err)
	}
	return nil
}

// WaitGet retries Get until it succeeds or timeout passes: a new Service
// takes kube-proxy a moment to program, as in any cluster.
func (c *Client) WaitGet(ctx context.Context, url string, timeout time.Duration) (string, error) {
	var body string
	err := waitFor(ctx, timeout, func(ctx context.Context) error {
		var err error
		body, err = c.Get(ctx, url)
		return err
	})
	return body, err
}

// Post sends an empty POST and wants a 2xx answer.
func (c *Client) Post(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("from %s in %s: %w", c.pod, c.member, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("from %s in %s: POST %s: %s", c.pod, c.member, url, resp.Status)
	}
	return nil
}
