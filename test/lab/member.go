// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	mdns "github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

const (
	// managedBy marks the objects the lab writes itself (kube-dns's
	// EndpointSlices), so the endpointslice controller leaves them alone.
	managedBy = "lab.mcs-gitops.test"
	// readyTimeout bounds waiting for one member's components.
	readyTimeout = 2 * time.Minute
	// kubeProxyHealthz is where kube-proxy answers inside the node.
	kubeProxyHealthz = "127.0.0.1:10256"
)

// Requirements says why the lab cannot run on this machine, or nil: it
// needs root (network namespaces, veth pairs, nftables), `ip` and `nft`,
// and kube-controller-manager, kube-proxy and coredns in the testbin
// directory.
func Requirements() error {
	if os.Geteuid() != 0 {
		return errors.New("lab: needs root (network namespaces, veth pairs and nftables)")
	}
	var errs []error
	for _, tool := range []string{"ip", "nft", "sysctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			errs = append(errs, fmt.Errorf("lab: %s not found (`make testbin` installs nftables; iproute2 and procps provide ip and sysctl)", tool))
		}
	}
	dir, err := envtest.AssetsDir()
	if err != nil {
		return err
	}
	for _, b := range []string{"kube-controller-manager", "kube-proxy", "coredns"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.Mode().Perm()&0o111 == 0 {
			errs = append(errs, fmt.Errorf("lab: %s not in %s (run `make testbin`)", b, dir))
		}
	}
	if len(errs) == 0 {
		// A container or sandbox can be root without the right to make
		// network namespaces.
		probe := fmt.Sprintf("%sprobe-%d", netnsPrefix, os.Getpid())
		if err := ip("netns", "add", probe); err != nil {
			errs = append(errs, fmt.Errorf("lab: cannot create a network namespace: %w", err))
		} else {
			_ = deleteNetns(probe)
		}
	}
	return errors.Join(errs...)
}

// startMember starts a member's components and node agent, and waits until
// kube-proxy and CoreDNS answer inside the node.
func (l *Lab) startMember(ctx context.Context, m *Member, cert tls.Certificate) error {
	dir, _ := envtest.AssetsDir()
	if err := l.forwardAPIServer(m); err != nil {
		return err
	}
	kcm, err := startProc(m.Name+"/kube-controller-manager", "", baseEnv(), filepath.Join(dir, "kube-controller-manager"),
		"--kubeconfig="+m.Kubeconfig,
		// What Deployments and StatefulSets need to become Pods, Pods to
		// become EndpointSlices, and deletions to finish; nothing else.
		"--controllers=deployment-controller,replicaset-controller,statefulset-controller,endpointslice-controller,namespace-controller,garbage-collector-controller",
		"--leader-elect=false", "--secure-port=0", "--cluster-name="+m.Name,
		"--concurrent-service-endpoint-syncs=10")
	if err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	l.track(kcm)

	proxyConfig := filepath.Join(l.dir, m.Name+"-kube-proxy.yaml")
	if err := os.WriteFile(proxyConfig, []byte(kubeProxyConfig(m)), 0o600); err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	kp, err := startProc(m.Name+"/kube-proxy", m.node.netns, baseEnv(), filepath.Join(dir, "kube-proxy"), "--config="+proxyConfig)
	if err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	l.track(kp)

	if err := l.startDNS(ctx, m, dir); err != nil {
		return err
	}
	ks, err := startKubeletServer(m.node, cert)
	if err != nil {
		return err
	}
	l.onStop(ks.close)
	if err := m.node.register(ctx); err != nil {
		return err
	}
	if err := m.node.run(ctx, 4); err != nil {
		return err
	}
	if err := waitFor(ctx, readyTimeout, func(ctx context.Context) error {
		for _, p := range []*proc{kcm, kp} {
			if p.exited() {
				return fmt.Errorf("%s exited: %v\n%s", p.name, p.waitErr, p.out.String())
			}
		}
		return httpOK(ctx, m.node.netns, "http://"+kubeProxyHealthz+"/healthz")
	}); err != nil {
		return fmt.Errorf("cluster %q: kube-proxy not healthy: %w\nits output:\n%s", m.Name, err, kp.out.String())
	}
	return nil
}

// forwardAPIServer makes the member's apiserver reachable from inside its
// node at the same address it has on the host (127.0.0.1:<port>), so
// kube-proxy and CoreDNS use the member's ordinary kubeconfig and the
// apiserver's certificate still matches.
func (l *Lab) forwardAPIServer(m *Member) error {
	u, err := url.Parse(m.Config.Host)
	if err != nil {
		return fmt.Errorf("cluster %q: apiserver address: %w", m.Name, err)
	}
	ln, err := listenIn(m.node.netns, "tcp", u.Host)
	if err != nil {
		return fmt.Errorf("cluster %q: apiserver forwarder: %w", m.Name, err)
	}
	l.onStop(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", u.Host)
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return nil
}

// kubeProxyConfig is the member's KubeProxyConfiguration: nftables mode
// for the member's node, the members' pod CIDRs as the cluster CIDR (pods
// of every member are "local": a flat network), and no conntrack sysctls,
// which only the host's namespace may set.
func kubeProxyConfig(m *Member) string {
	var cidrs []string
	if m.node.v4 {
		cidrs = append(cidrs, "10.244.0.0/16")
	}
	if m.node.v6 {
		cidrs = append(cidrs, "fd00:10:244::/48")
	}
	if m.node.v6First && len(cidrs) == 2 {
		cidrs[0], cidrs[1] = cidrs[1], cidrs[0]
	}
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
hostnameOverride: %s
clusterCIDR: %s
clientConnection:
  kubeconfig: %s
healthzBindAddress: %s
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, m.NodeName, strings.Join(cidrs, ","), m.Kubeconfig, kubeProxyHealthz)
}

// startDNS creates the kube-dns Service and its EndpointSlices (the node's
// addresses, as for a hostNetwork pod) and runs CoreDNS in the node.
func (l *Lab) startDNS(ctx context.Context, m *Member, dir string) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP},
		}},
	}
	if m.node.v4 {
		svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, "10.96.0.10")
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, corev1.IPv4Protocol)
	}
	if m.node.v6 {
		svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, "fd00:10:96::a")
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, corev1.IPv6Protocol)
	}
	svc.Spec.ClusterIP = svc.Spec.ClusterIPs[0]
	svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	if len(svc.Spec.ClusterIPs) == 2 {
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
	}
	if err := m.Client.Create(ctx, svc); err != nil {
		return fmt.Errorf("cluster %q: kube-dns Service: %w", m.Name, err)
	}
	for _, ipStr := range svc.Spec.ClusterIPs {
		m.DNSIPs = append(m.DNSIPs, netip.MustParseAddr(ipStr))
	}
	m.node.dnsIPs = m.DNSIPs
	for _, a := range m.node.nodeIPs() {
		fam := discoveryv1.AddressTypeIPv4
		if a.Is6() {
			fam = discoveryv1.AddressTypeIPv6
		}
		es := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-dns-" + strings.ToLower(string(fam)), Namespace: metav1.NamespaceSystem,
				Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns", discoveryv1.LabelManagedBy: managedBy}},
			AddressType: fam,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{a.String()}, NodeName: ptr.To(m.NodeName),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports: []discoveryv1.EndpointPort{
				{Name: ptr.To("dns"), Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolUDP)},
				{Name: ptr.To("dns-tcp"), Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolTCP)},
			},
		}
		if err := m.Client.Create(ctx, es); err != nil {
			return fmt.Errorf("cluster %q: kube-dns EndpointSlice: %w", m.Name, err)
		}
	}
	corefile := filepath.Join(l.dir, m.Name+".Corefile")
	if err := os.WriteFile(corefile, []byte(fmt.Sprintf(`.:53 {
    errors
    kubernetes cluster.local clusterset.local {
        kubeconfig %q
        multicluster clusterset.local
        startup_timeout 30s
    }
}
`, m.Kubeconfig)), 0o600); err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	cd, err := startProc(m.Name+"/coredns", m.node.netns, baseEnv(), filepath.Join(dir, "coredns"), "-conf", corefile)
	if err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	l.track(cd)
	server := netip.AddrPortFrom(m.node.nodeIPs()[0], 53).String()
	if err := waitFor(ctx, readyTimeout, func(ctx context.Context) error {
		if cd.exited() {
			return fmt.Errorf("coredns exited: %v", cd.waitErr)
		}
		_, err := queryIn(ctx, m.node.netns, server, "kube-dns.kube-system.svc.cluster.local.", mdns.TypeA)
		return err
	}); err != nil {
		return fmt.Errorf("cluster %q: CoreDNS not answering: %w\nits output:\n%s", m.Name, err, cd.out.String())
	}
	return nil
}

// queryIn sends one DNS query over UDP from inside a namespace and returns
// the answer, or an error for anything but NOERROR.
func queryIn(ctx context.Context, netns, server, name string, qtype uint16) (*mdns.Msg, error) {
	conn, err := dialIn(ctx, netns, "udp", server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	}
	q := new(mdns.Msg)
	q.SetQuestion(name, qtype)
	co := &mdns.Conn{Conn: conn}
	if err := co.WriteMsg(q); err != nil {
		return nil, err
	}
	r, err := co.ReadMsg()
	if err != nil {
		return nil, err
	}
	if r.Rcode != mdns.RcodeSuccess {
		return r, fmt.Errorf("%s %s: %s", name, mdns.TypeToString[qtype], mdns.RcodeToString[r.Rcode])
	}
	return r, nil
}

// httpOK GETs url (a literal IP and port) from inside a namespace and
// wants a 200.
func httpOK(ctx context.Context, netns, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	code, err := getIn(ctx, netns, u.Host, u.Path)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("%s: %s", rawURL, http.StatusText(code))
	}
	return nil
}

// getIn sends one GET for path to addr (a literal IP and port) from inside
// a namespace, on a connection of its own, and returns the status code.
func getIn(ctx context.Context, netns, addr, path string) (int, error) {
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialIn(ctx, netns, "tcp", addr)
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitFor polls check every 100 ms until it returns nil or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %w", timeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
