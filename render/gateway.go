// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// ServiceExport annotations that shape what gateway mode renders for an
// export. They are read from the exporting member's ServiceExport.
const (
	// HTTPPortsAnnotation lists Service ports (names or numbers,
	// comma-separated) to route as HTTP even though neither their
	// appProtocol nor their name says so.
	HTTPPortsAnnotation = "gateway.mcs-gitops.io/http-ports"
	// PathAnnotation adds a path rule for callers that reach the gateway
	// directly, FSM style: requests matching it go to the export.
	PathAnnotation = "gateway.mcs-gitops.io/path"
	// PathTypeAnnotation is PathPrefix (default), Exact or RegularExpression.
	PathTypeAnnotation = "gateway.mcs-gitops.io/path-type"
	// RewritePrefixAnnotation replaces the matched path prefix before the
	// request reaches the Service; only with PathPrefix.
	RewritePrefixAnnotation = "gateway.mcs-gitops.io/rewrite-prefix"
	// HostnamesAnnotation lists extra hostnames (comma-separated) the path
	// rule matches; without it the path rule matches any hostname.
	HostnamesAnnotation = "gateway.mcs-gitops.io/hostnames"
)

// ClusterSetDomain is the KEP-1645 domain of clusterset names.
const ClusterSetDomain = "svc.clusterset.local"

// ClusterSetHostname is what a client calling the clusterset name of a
// service sends as its Host header.
func ClusterSetHostname(ns, name string) string {
	return name + "." + ns + "." + ClusterSetDomain
}

// gateway is a member's east-west gateway as the renderer uses it.
type gateway struct {
	namespace, name string
	httpPort        int32
	tcp             *v1alpha1.PortRange
	// addresses other members reach it at, sorted; empty when its DNS
	// host has not been resolved.
	addresses []netip.Addr
	host      string
	// listenersInGateway: the TCP listeners of the member's exports are
	// declared in the Gateway itself rather than in ListenerSets
	// (tcpListeners: Gateway).
	listenersInGateway bool
}

func newGateway(g *v1alpha1.Gateway, resolved []string) *gateway {
	gw := &gateway{namespace: g.Namespace, name: g.Name, httpPort: g.Port, tcp: g.TCPPorts, host: g.Host,
		listenersInGateway: g.TCPListeners == v1alpha1.TCPListenersGateway}
	if gw.httpPort == 0 {
		gw.httpPort = 80
	}
	if a, err := netip.ParseAddr(g.Host); err == nil {
		gw.addresses = []netip.Addr{a.Unmap()}
		return gw
	}
	for _, r := range resolved {
		if a, err := netip.ParseAddr(r); err == nil {
			gw.addresses = append(gw.addresses, a.Unmap())
		}
	}
	slices.SortFunc(gw.addresses, func(a, b netip.Addr) int { return a.Compare(b) })
	gw.addresses = slices.Compact(gw.addresses)
	return gw
}

func (g *gateway) ref() string { return g.namespace + "/" + g.name }

func (g *gateway) addressStrings() []string {
	out := make([]string, len(g.addresses))
	for i, a := range g.addresses {
		out[i] = a.String()
	}
	return out
}

// throughGateway says whether consumer c reaches exporter s's endpoints
// through s's gateway rather than at their pod addresses: anything that
// crosses into or out of a gateway-mode member does.
func throughGateway(c, s *member) bool {
	return c != s && (c.mode == v1alpha1.ModeGateway || s.mode == v1alpha1.ModeGateway)
}

// routedBy says whether some other member reaches s's exports through its
// gateway, so s's gateway must carry routes for them.
func routedBy(s *member, members []*member) bool {
	if s.gw == nil {
		return false
	}
	for _, c := range members {
		if throughGateway(c, s) {
			return true
		}
	}
	return false
}

// portKind says how a gateway carries one Service port.
type portKind int

const (
	portUnsupported portKind = iota // not TCP: no Gateway API route carries it here
	portHTTP
	portTCP
)

// httpPortSet parses the HTTPPortsAnnotation: port names and numbers.
func httpPortSet(v string) (map[string]bool, error) {
	set := map[string]bool{}
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if n, err := strconv.Atoi(f); err == nil {
			if n < 1 || n > 65535 {
				return nil, fmt.Errorf("%s: %d is not a port number", HTTPPortsAnnotation, n)
			}
		}
		set[f] = true
	}
	return set, nil
}

// classify decides whether a port is routed as HTTP (by hostname on the
// HTTP listener), as TCP (on a listener of its own), or cannot cross a
// gateway. TLS ports (https*) are TCP: the gateway passes them through.
func classify(p corev1.ServicePort, forced map[string]bool) portKind {
	if protocol(p.Protocol) != corev1.ProtocolTCP {
		return portUnsupported
	}
	if forced[p.Name] || forced[strconv.Itoa(int(p.Port))] {
		return portHTTP
	}
	if p.AppProtocol != nil {
		switch strings.ToLower(*p.AppProtocol) {
		case "http", "kubernetes.io/h2c":
			return portHTTP
		}
		return portTCP
	}
	if strings.HasPrefix(p.Name, "http") && !strings.HasPrefix(p.Name, "https") {
		return portHTTP
	}
	return portTCP
}

// lowestHTTPPort is the index in ports of the lowest-numbered port
// classify calls HTTP, given the export's HTTPPortsAnnotation; -1 when
// none is.
func lowestHTTPPort(ports []corev1.ServicePort, annotation string) int {
	forced, _ := httpPortSet(annotation)
	best := -1
	for i, p := range ports {
		if classify(p, forced) == portHTTP && (best < 0 || p.Port < ports[best].Port) {
			best = i
		}
	}
	return best
}
