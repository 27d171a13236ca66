// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// Reasons an export is not Valid in gateway mode, in the spirit of FSM's
// admission webhook: the export would make its gateway ambiguous or ask
// for something Gateway API cannot say.
const (
	ReasonHostnameConflict   = "HostnameConflict"
	ReasonPathConflict       = "PathConflict"
	ReasonUnsupportedRewrite = "UnsupportedRewrite"
	ReasonInvalidPath        = "InvalidPath"
	ReasonInvalidHostname    = "InvalidHostname"
	ReasonInvalidAnnotation  = "InvalidAnnotation"
	ReasonPortRangeExhausted = "PortRangeExhausted"
)

// maxListeners is ListenerSet's limit on listeners, hence on the TCP ports
// of one export, and Gateway's, hence on those of every export of a member
// whose Gateway declares them itself.
const maxListeners = 64

// exportRoute is what an exporter's gateway carries for one export: the
// routes and listeners planned for it.
type exportRoute struct {
	e  *export
	gw *gateway
	// http is the port served by hostname on the HTTP listener, nil when
	// the Service has no HTTP port.
	http *corev1.ServicePort
	// tcp ports each get a listener of their own, in Service port order.
	tcp []corev1.ServicePort
	// unsupported ports (UDP, SCTP) no route carries.
	unsupported []corev1.ServicePort
	path        *pathRule
	// listener ports by Service port number, for tcp.
	listeners map[int32]int32
	invalid   []Condition
}

// pathRule is the FSM-style rule for callers that reach the gateway
// directly rather than through a clusterset name.
type pathRule struct {
	hostnames []string
	pathType  gatewayv1.PathMatchType
	path      string
	rewrite   *string
	// explicitPath: the export set a path, so a clash is a PathConflict
	// rather than a HostnameConflict.
	explicitPath bool
}

// gatewayPort maps a Service port of the export to the gateway port that
// carries it; false when the gateway does not carry it.
func (r *exportRoute) gatewayPort(port int32) (int32, bool) {
	if r.http != nil && r.http.Port == port {
		return r.gw.httpPort, true
	}
	l, ok := r.listeners[port]
	return l, ok
}

// gatewayPlan is every export's route plan, settled over whole gateways
// before any service is rendered, because claims and port allocations are
// per gateway, not per service.
type gatewayPlan struct {
	routes map[*export]*exportRoute
	// weighted holds, per consuming member, the listener port its gateway
	// gives each service's weighted route, by namespace/name; missing when
	// the range had none left.
	weighted map[*member]map[string]int32
	reports  []GatewayReport
}

// planGateways validates and allocates for every export of every member
// whose gateway other members route through. Allocations committed in prev
// are kept while their export and port exist, so adding or removing an
// export never moves another's port.
func planGateways(members []*member, keys []*serviceKey, prev Allocations) *gatewayPlan {
	plan := &gatewayPlan{routes: map[*export]*exportRoute{}, weighted: map[*member]map[string]int32{}}
	byMember := map[*member][]*exportRoute{}
	for _, k := range keys {
		for _, e := range k.exports {
			if e.svc == nil || e.svc.Spec.Type == corev1.ServiceTypeExternalName || e.outside.reason != "" || !routedBy(e.m, members) {
				continue
			}
			r := newExportRoute(e)
			plan.routes[e] = r
			byMember[e.m] = append(byMember[e.m], r)
		}
	}
	for _, m := range members {
		if m.gw == nil {
			continue
		}
		rs := byMember[m]
		settleClaims(rs)
		var weighted []allocKey
		for _, k := range keys {
			if wantsWeightedListener(m, k) {
				weighted = append(weighted, allocKey{k.ns, k.name, 0, PurposeWeighted})
			}
		}
		allocs, got := allocate(m, rs, weighted, prev[m.name])
		plan.weighted[m] = map[string]int32{}
		for k, p := range got {
			plan.weighted[m][k.ns+"/"+k.svc] = p
		}
		rep := GatewayReport{Member: m.name, Gateway: m.gw.ref(), Addresses: m.gw.addressStrings(), HTTPPort: m.gw.httpPort, Allocations: allocs}
		if r := m.gw.tcp; r != nil {
			rep.TCPPorts = fmt.Sprintf("%d-%d", r.From, r.To)
		}
		plan.reports = append(plan.reports, rep)
	}
	return plan
}

func newExportRoute(e *export) *exportRoute {
	r := &exportRoute{e: e, gw: e.m.gw, listeners: map[int32]int32{}}
	ann := e.se.Annotations
	forced, err := httpPortSet(ann[HTTPPortsAnnotation])
	if err != nil {
		r.fail(ReasonInvalidAnnotation, err.Error())
		return r
	}
	ports := append([]corev1.ServicePort(nil), e.svc.Spec.Ports...)
	sort.SliceStable(ports, func(i, j int) bool { return ports[i].Port < ports[j].Port })
	for i := range ports {
		p := ports[i]
		switch classify(p, forced) {
		case portHTTP:
			if r.http == nil {
				r.http = &p
				continue
			}
			// One hostname can name only one backend port on the HTTP
			// listener; further HTTP ports get listeners of their own.
			r.tcp = append(r.tcp, p)
		case portTCP:
			r.tcp = append(r.tcp, p)
		default:
			r.unsupported = append(r.unsupported, p)
		}
	}
	if len(r.tcp) > maxListeners {
		holder := "one ListenerSet"
		if r.gw.listenersInGateway {
			holder = "a Gateway"
		}
		r.fail(ReasonPortRangeExhausted, fmt.Sprintf("the Service has %d TCP ports to publish, over the %d listeners %s holds", len(r.tcp), maxListeners, holder))
		return r
	}
	r.path = parsePathRule(r, ann)
	return r
}

// gatewayNotReady turns a valid export's Ready condition False for a
// problem of its gateway route: the export still reaches the members that
// do not go through the gateway, and the message names the ones that do.
func gatewayNotReady(conds []Condition, r *exportRoute, unreached []string) []Condition {
	why, _ := findCondition(r.invalid, "Valid")
	who := "no member reaches it through the gateway now"
	if len(unreached) > 0 {
		sorted := slices.Clone(unreached)
		sort.Strings(sorted)
		who = "members " + strings.Join(sorted, ", ") + " reach it only through the gateway and do not get it"
		if len(sorted) == 1 {
			who = "member " + sorted[0] + " reaches it only through the gateway and does not get it"
		}
	}
	out := slices.Clone(conds)
	for i, c := range out {
		if c.Type == "Ready" {
			out[i] = Condition{Type: "Ready", Status: "False", Reason: why.Reason,
				Message: fmt.Sprintf("member %s's gateway cannot carry this export: %s; %s; the others import it (%s)", r.e.m.name, why.Message, who, c.Message)}
		}
	}
	return out
}

func (r *exportRoute) fail(reason, msg string) {
	if r.invalid == nil {
		r.invalid = invalidConditions(mcsv1alpha1.ServiceExportConditionReason(reason), msg)
	}
}

// parsePathRule reads the path annotations; nil when the export sets
// none. A rule that cannot be expressed marks the export invalid.
func parsePathRule(r *exportRoute, ann map[string]string) *pathRule {
	path, hasPath := ann[PathAnnotation]
	hosts, hasHosts := ann[HostnamesAnnotation]
	typ, hasType := ann[PathTypeAnnotation]
	rewrite, hasRewrite := ann[RewritePrefixAnnotation]
	if !hasPath && !hasHosts {
		if hasType || hasRewrite {
			r.fail(ReasonInvalidPath, fmt.Sprintf("%s and %s need %s", PathTypeAnnotation, RewritePrefixAnnotation, PathAnnotation))
		}
		return nil
	}
	if r.http == nil {
		r.fail(ReasonInvalidPath, "path and hostname rules need an HTTP port, and the Service has none (set appProtocol: http, name the port http*, or list it in "+HTTPPortsAnnotation+")")
		return nil
	}
	pr := &pathRule{pathType: gatewayv1.PathMatchPathPrefix, path: "/", explicitPath: hasPath}
	if hasPath {
		pr.path = path
		if !strings.HasPrefix(path, "/") {
			r.fail(ReasonInvalidPath, fmt.Sprintf("%s %q does not start with /", PathAnnotation, path))
			return nil
		}
	}
	if hasType {
		switch t := gatewayv1.PathMatchType(typ); t {
		case gatewayv1.PathMatchPathPrefix, gatewayv1.PathMatchExact, gatewayv1.PathMatchRegularExpression:
			pr.pathType = t
		default:
			r.fail(ReasonInvalidPath, fmt.Sprintf("%s %q is not PathPrefix, Exact or RegularExpression", PathTypeAnnotation, typ))
			return nil
		}
	}
	if hasRewrite {
		switch {
		case pr.pathType != gatewayv1.PathMatchPathPrefix:
			r.fail(ReasonUnsupportedRewrite, fmt.Sprintf("%s needs path-type PathPrefix; Gateway API cannot replace the prefix of an %s match", RewritePrefixAnnotation, pr.pathType))
			return nil
		case !strings.HasPrefix(rewrite, "/"):
			r.fail(ReasonUnsupportedRewrite, fmt.Sprintf("%s %q does not start with /", RewritePrefixAnnotation, rewrite))
			return nil
		}
		pr.rewrite = &rewrite
	}
	for h := range strings.SplitSeq(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		check := strings.TrimPrefix(h, "*.")
		if msgs := validation.IsDNS1123Subdomain(check); len(msgs) > 0 {
			r.fail(ReasonInvalidHostname, fmt.Sprintf("%s: %q is not a hostname: %s", HostnamesAnnotation, h, strings.Join(msgs, "; ")))
			return nil
		}
		if strings.HasSuffix(h, "."+ClusterSetDomain) {
			r.fail(ReasonInvalidHostname, fmt.Sprintf("%s: %q is in %s, which belongs to the clusterset names of services", HostnamesAnnotation, h, ClusterSetDomain))
			return nil
		}
		pr.hostnames = append(pr.hostnames, h)
	}
	sort.Strings(pr.hostnames)
	pr.hostnames = compactStrings(pr.hostnames)
	return pr
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// claims are the (hostname, path) pairs a path rule takes on its gateway;
// "*" stands for any hostname.
func (pr *pathRule) claims() []string {
	hosts := pr.hostnames
	if len(hosts) == 0 {
		hosts = []string{"*"}
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h + " " + string(pr.pathType) + " " + pr.path
	}
	return out
}

// settleClaims gives each (hostname, path) on a gateway to the oldest
// export claiming it; every later claimant is invalid as a whole, so no
// route of it is rendered. Clusterset hostnames are unique per service by
// construction and never clash.
func settleClaims(rs []*exportRoute) {
	ordered := append([]*exportRoute(nil), rs...)
	sort.SliceStable(ordered, func(i, j int) bool {
		a, b := ordered[i].e.se, ordered[j].e.se
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	owner := map[string]*exportRoute{}
	for _, r := range ordered {
		if r.invalid != nil || r.path == nil {
			continue
		}
		var clash *exportRoute
		var what string
		for _, c := range r.path.claims() {
			if o := owner[c]; o != nil {
				clash, what = o, c
				break
			}
		}
		if clash == nil {
			for _, c := range r.path.claims() {
				owner[c] = r
			}
			continue
		}
		host, rest, _ := strings.Cut(what, " ")
		if host == "*" {
			host = "any hostname"
		} else {
			host = "hostname " + host
		}
		reason := ReasonHostnameConflict
		if r.path.explicitPath {
			reason = ReasonPathConflict
		}
		r.fail(reason, fmt.Sprintf("%s with path %s on gateway %s of member %s is already claimed by the older export %s/%s",
			host, rest, r.gw.ref(), r.e.m.name, clash.e.se.Namespace, clash.e.se.Name))
	}
}

// wantsWeightedListener says whether member m's gateway needs an HTTP
// listener for a weighted policy of the service: m has a policy asking
// for weights and no mesh that would carry them instead.
func wantsWeightedListener(m *member, k *serviceKey) bool {
	if m.mesh || m.gw == nil || m.gw.listenersInGateway {
		return false
	}
	pol := m.policies[k.ns+"/"+k.name]
	if pol == nil || !hasWeights(pol) || len(pol.Validate()) > 0 {
		return false
	}
	// Only a service some export gives an HTTP port can be weighted; the
	// render decides finally, this only avoids allocating a port for a
	// service that certainly cannot use it.
	for _, e := range k.exports {
		if e.svc != nil && !e.headless() && lowestHTTPPort(e.svc.Spec.Ports, e.se.Annotations[HTTPPortsAnnotation]) >= 0 {
			return true
		}
	}
	return false
}
