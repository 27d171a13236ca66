// SPDX-License-Identifier: Apache-2.0

package render

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// gatewaySet is a ClusterSet of gateway-mode members; member i's gateway
// is at 192.0.2.(i+1) with TCP ports 30000 to 30000+tcpPorts-1.
func gatewaySet(tcpPorts int32, members ...string) *v1alpha1.ClusterSet {
	cs := clusterSetOf(members...)
	for i := range cs.Spec.Members {
		m := &cs.Spec.Members[i]
		m.Mode = v1alpha1.ModeGateway
		m.Gateway = &v1alpha1.Gateway{Host: fmt.Sprintf("192.0.2.%d", i+1), Port: 80, Namespace: "gw", Name: "east-west"}
		if tcpPorts > 0 {
			m.Gateway.TCPPorts = &v1alpha1.PortRange{From: 30000, To: 30000 + tcpPorts - 1}
		}
	}
	return cs
}

// exportService adds namespace/name to s: a Service with the given ports,
// its ServiceExport created at created, and one endpoint whose readiness
// is ready.
func exportService(t *testing.T, s *snapshot.Snapshot, ns, name, created string, ready bool, ports ...corev1.ServicePort) {
	t.Helper()
	se := tenant.Export(ns, name)
	se.CreationTimestamp = mustTime(t, created)
	svc := tenant.Service(ns, name, ports...)
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.ClusterIP = "10.96.0.10"
	endpoints := tenant.NotReady("10.244.0.5")
	if ready {
		endpoints = tenant.Ready("10.244.0.5")
	}
	s.Namespaces = append(s.Namespaces, *tenant.Namespace(ns))
	s.ServiceExports = append(s.ServiceExports, *se)
	s.Services = append(s.Services, *svc)
	s.EndpointSlices = append(s.EndpointSlices, *tenant.Slice(svc, name+"-"+s.Member, discoveryv1.AddressTypeIPv4, endpoints...))
}

func tcpPort(name string, port int32) corev1.ServicePort { return tenant.Port(name, port, 0) }

func allocationsOf(out *Output, member string) map[string]int32 {
	got := map[string]int32{}
	for _, g := range out.Report.Gateways {
		if g.Member == member {
			for _, a := range g.Allocations {
				got[fmt.Sprintf("%s/%s:%d", a.Namespace, a.Service, a.ServicePort)] = a.Port
			}
		}
	}
	return got
}

func committedOf(out *Output) Allocations {
	a := Allocations{}
	for _, g := range out.Report.Gateways {
		a[g.Member] = g.Allocations
	}
	return a
}

func objectsOfKind(out *Output, member, kind string) []Object {
	var objs []Object
	for _, m := range out.Members {
		if m.Name != member {
			continue
		}
		for _, o := range m.Objects {
			if o.Object.GetObjectKind().GroupVersionKind().Kind == kind {
				objs = append(objs, o)
			}
		}
	}
	return objs
}

func TestTCPListenerPortsStayPutWhenOtherExportsComeAndGo(t *testing.T) {
	cfg := gatewaySet(10, "g", "c")
	snaps := func(services ...string) []*snapshot.Snapshot {
		g := &snapshot.Snapshot{Member: "g"}
		for _, s := range services {
			exportService(t, g, "db", s, "2026-01-01T00:00:00Z", true, tcpPort("pg", 5432))
		}
		return []*snapshot.Snapshot{g, {Member: "c"}}
	}
	first, err := Render(cfg, snaps("b", "c", "d"), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int32{"db/b:5432": 30000, "db/c:5432": 30001, "db/d:5432": 30002}, allocationsOf(first, "g"))

	// b goes away and a (sorted first) arrives: c and d keep their
	// ports, a takes the one b freed.
	second, err := Render(cfg, snaps("a", "c", "d"), committedOf(first))
	require.NoError(t, err)
	assert.Equal(t, map[string]int32{"db/a:5432": 30000, "db/c:5432": 30001, "db/d:5432": 30002}, allocationsOf(second, "g"))

	// Without the committed state the same input packs differently,
	// which is exactly what the record in Git prevents.
	fresh, err := Render(cfg, snaps("c", "d"), nil)
	require.NoError(t, err)
	kept, err := Render(cfg, snaps("c", "d"), committedOf(second))
	require.NoError(t, err)
	assert.Equal(t, int32(30000), allocationsOf(fresh, "g")["db/c:5432"])
	assert.Equal(t, int32(30001), allocationsOf(kept, "g")["db/c:5432"])
}

func TestExhaustedRangeLeavesTheWholeExportOutOfTheGateway(t *testing.T) {
	cfg := gatewaySet(2, "g", "c")
	g := &snapshot.Snapshot{Member: "g"}
	exportService(t, g, "db", "a-big", "2026-01-01T00:00:00Z", true, tcpPort("one", 1), tcpPort("two", 2), tcpPort("three", 3))
	exportService(t, g, "db", "b-small", "2026-01-01T00:00:00Z", true, tcpPort("pg", 5432))
	out, err := Render(cfg, []*snapshot.Snapshot{g, {Member: "c"}}, nil)
	require.NoError(t, err)

	assert.Equal(t, map[string]int32{"db/b-small:5432": 30000}, allocationsOf(out, "g"), "the big export's partial allocation is rolled back")
	big := exportOf(t, serviceReport(t, out, "db", "a-big"), "g")
	ready, _ := big.Condition("Ready")
	assert.Equal(t, "False", ready.Status)
	assert.Equal(t, ReasonPortRangeExhausted, ready.Reason)
	assert.Contains(t, ready.Message, "30000-30001")
	for _, o := range objectsOfKind(out, "g", "TCPRoute") {
		assert.NotContains(t, o.Path, "a-big", "nothing of the export is rendered on the gateway")
	}
	assert.Len(t, objectsOfKind(out, "g", "TCPRoute"), 1)
	assert.Equal(t, []string{"g"}, importers(t, out, "db", "a-big"), "only the exporter itself has endpoints of it")
}

// A gateway problem stays local: it removes the export only for members
// that reach it through that gateway. A flat consumer of a flat exporter
// (which has a gateway for others) and the exporter itself still import it,
// and the export's status names the members that do not.
func TestGatewayProblemsStayLocal(t *testing.T) {
	cfg := clusterSetOf("x", "f", "gw")
	cfg.Spec.Members[0].Gateway = &v1alpha1.Gateway{Host: "192.0.2.1", Port: 80, Namespace: "gw", Name: "east-west",
		TCPPorts: &v1alpha1.PortRange{From: 30000, To: 30001}}
	cfg.Spec.Members[2].Mode = v1alpha1.ModeGateway
	cfg.Spec.Members[2].Gateway = &v1alpha1.Gateway{Host: "192.0.2.3", Port: 80, Namespace: "gw", Name: "east-west"}
	x := &snapshot.Snapshot{Member: "x"}
	exportService(t, x, "db", "big", "2026-01-01T00:00:00Z", true, tcpPort("one", 1), tcpPort("two", 2), tcpPort("three", 3))
	f := &snapshot.Snapshot{Member: "f", Namespaces: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "db"}}}}
	gw := &snapshot.Snapshot{Member: "gw", Namespaces: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "db"}}}}
	out, err := Render(cfg, []*snapshot.Snapshot{x, f, gw}, nil)
	require.NoError(t, err)

	assert.ElementsMatch(t, []string{"f", "x"}, importers(t, out, "db", "big"), "flat members and the exporter keep its endpoints")
	rep := serviceReport(t, out, "db", "big")
	e := exportOf(t, rep, "x")
	valid, _ := e.Condition("Valid")
	assert.Equal(t, "True", valid.Status, "the export itself is fine")
	ready, _ := e.Condition("Ready")
	assert.Equal(t, "False", ready.Status)
	assert.Equal(t, ReasonPortRangeExhausted, ready.Reason)
	assert.Contains(t, ready.Message, "gw", "names the member that cannot reach it")
	assert.NotContains(t, ready.Message, "f,", "not the flat member")
	assert.Contains(t, rep.ImportedBy, "gw", "gw still gets the ServiceImport")
}

// importers lists the members whose derived Service for ns/name gets
// endpoint slices.
func importers(t *testing.T, out *Output, ns, name string) []string {
	t.Helper()
	var got []string
	for _, m := range out.Members {
		for _, o := range m.Objects {
			if sl, ok := o.Object.(*discoveryv1.EndpointSlice); ok && sl.Namespace == ns && sl.Labels[discoveryv1.LabelServiceName] == DerivedServiceName(ns, name) {
				got = append(got, m.Name)
				break
			}
		}
	}
	return got
}

func TestPathClaimGoesToTheOlderExportWhateverTheNamespaceOrder(t *testing.T) {
	cfg := gatewaySet(0, "g", "c")
	g := &snapshot.Snapshot{Member: "g"}
	http := corev1.ServicePort{Name: "http", Port: 80}
	exportService(t, g, "aaa", "newer", "2026-03-01T00:00:00Z", true, http)
	exportService(t, g, "zzz", "older", "2026-01-01T00:00:00Z", true, http)
	for i := range g.ServiceExports {
		g.ServiceExports[i].Annotations = map[string]string{PathAnnotation: "/api"}
	}
	out, err := Render(cfg, []*snapshot.Snapshot{g, {Member: "c"}}, nil)
	require.NoError(t, err)

	newer, _ := exportOf(t, serviceReport(t, out, "aaa", "newer"), "g").Condition("Ready")
	assert.Equal(t, "False", newer.Status)
	assert.Equal(t, ReasonPathConflict, newer.Reason)
	assert.Contains(t, newer.Message, "zzz/older")
	older, _ := exportOf(t, serviceReport(t, out, "zzz", "older"), "g").Condition("Ready")
	assert.Equal(t, "True", older.Status)
	for _, o := range objectsOfKind(out, "g", "HTTPRoute") {
		assert.Equal(t, "zzz", o.Object.(*gatewayv1.HTTPRoute).Namespace)
	}
}

func TestRewriteNeedsAPrefixMatch(t *testing.T) {
	cfg := gatewaySet(0, "g", "c")
	g := &snapshot.Snapshot{Member: "g"}
	exportService(t, g, "web", "site", "2026-01-01T00:00:00Z", true, corev1.ServicePort{Name: "http", Port: 80})
	g.ServiceExports[0].Annotations = map[string]string{PathAnnotation: "/site", PathTypeAnnotation: "Exact", RewritePrefixAnnotation: "/"}
	out, err := Render(cfg, []*snapshot.Snapshot{g, {Member: "c"}}, nil)
	require.NoError(t, err)
	valid, _ := exportOf(t, serviceReport(t, out, "web", "site"), "g").Condition("Ready")
	assert.Equal(t, ReasonUnsupportedRewrite, valid.Reason)
	assert.Empty(t, objectsOfKind(out, "g", "HTTPRoute"))
	assert.Empty(t, objectsOfKind(out, "c", "EndpointSlice"))
}

func TestConsumerReachesGatewayMemberAtItsGatewayPorts(t *testing.T) {
	cfg := gatewaySet(10, "g", "c")
	g := &snapshot.Snapshot{Member: "g"}
	exportService(t, g, "db", "app", "2026-01-01T00:00:00Z", true,
		corev1.ServicePort{Name: "web", Port: 8080, AppProtocol: ptr.To("http")}, tcpPort("pg", 5432), corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	out, err := Render(cfg, []*snapshot.Snapshot{g, {Member: "c", Namespaces: g.Namespaces}}, nil)
	require.NoError(t, err)

	slices := objectsOfKind(out, "c", "EndpointSlice")
	require.Len(t, slices, 1)
	sl := slices[0].Object.(*discoveryv1.EndpointSlice)
	assert.Equal(t, []string{"192.0.2.1"}, sl.Endpoints[0].Addresses)
	assert.Equal(t, "g", sl.Labels[mcsv1alpha1.LabelSourceCluster])
	ports := map[string]int32{}
	for _, p := range sl.Ports {
		ports[*p.Name] = *p.Port
	}
	assert.Equal(t, map[string]int32{"web": 80, "pg": 30000}, ports, "HTTP on the gateway's HTTP port, TCP on its listener, UDP left out")
	assert.Contains(t, serviceReport(t, out, "db", "app").Warnings[0], `port "dns" (53) of member g's export is UDP`)

	// The exporter keeps its own pod endpoints.
	own := objectsOfKind(out, "g", "EndpointSlice")
	require.Len(t, own, 1)
	assert.Equal(t, []string{"10.244.0.5"}, own[0].Object.(*discoveryv1.EndpointSlice).Endpoints[0].Addresses)
}

func TestGatewayEndpointIsNotReadyWhenTheExporterHasNoReadyEndpoint(t *testing.T) {
	cfg := gatewaySet(0, "g", "c")
	g := &snapshot.Snapshot{Member: "g"}
	exportService(t, g, "web", "site", "2026-01-01T00:00:00Z", false, corev1.ServicePort{Name: "http", Port: 80})
	out, err := Render(cfg, []*snapshot.Snapshot{g, {Member: "c", Namespaces: g.Namespaces}}, nil)
	require.NoError(t, err)
	sl := objectsOfKind(out, "c", "EndpointSlice")[0].Object.(*discoveryv1.EndpointSlice)
	assert.False(t, *sl.Endpoints[0].Conditions.Ready)
}

func serviceReport(t *testing.T, out *Output, ns, name string) ServiceReport {
	t.Helper()
	for _, s := range out.Report.Services {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	t.Fatalf("no report for %s/%s", ns, name)
	return ServiceReport{}
}

func TestSameExtraHostnameOnOneGatewayIsAHostnameConflict(t *testing.T) {
	cfg := gatewaySet(0, "g", "h", "c")
	g, h := &snapshot.Snapshot{Member: "g"}, &snapshot.Snapshot{Member: "h"}
	http := corev1.ServicePort{Name: "http", Port: 80}
	exportService(t, g, "shop", "old", "2026-01-01T00:00:00Z", true, http)
	exportService(t, g, "shop", "new", "2026-02-01T00:00:00Z", true, http)
	// The same hostname on another member's gateway is no conflict.
	exportService(t, h, "shop", "new", "2026-02-01T00:00:00Z", true, http)
	for _, s := range []*snapshot.Snapshot{g, h} {
		for i := range s.ServiceExports {
			s.ServiceExports[i].Annotations = map[string]string{HostnamesAnnotation: "shop.example.com"}
		}
	}
	out, err := Render(cfg, []*snapshot.Snapshot{g, h, {Member: "c"}}, nil)
	require.NoError(t, err)
	rep := serviceReport(t, out, "shop", "new")
	lost, _ := exportOf(t, rep, "g").Condition("Ready")
	assert.Equal(t, ReasonHostnameConflict, lost.Reason)
	assert.Contains(t, lost.Message, "hostname shop.example.com with path PathPrefix / on gateway gw/east-west of member g is already claimed by the older export shop/old")
	kept, _ := exportOf(t, rep, "h").Condition("Ready")
	assert.Equal(t, "True", kept.Status)
}

// listenersInGateway sets tcpListeners: Gateway on every member of cfg.
func listenersInGateway(cfg *v1alpha1.ClusterSet) *v1alpha1.ClusterSet {
	for i := range cfg.Spec.Members {
		cfg.Spec.Members[i].Gateway.TCPListeners = v1alpha1.TCPListenersGateway
	}
	return cfg
}

// With tcpListeners: Gateway, one document per member declares the TCP
// listeners of all its exports in its own Gateway, and the TCPRoutes
// attach to those listeners; no ListenerSet is rendered, and the HTTP
// route is as before.
func TestTCPListenersInTheGateway(t *testing.T) {
	cfg := listenersInGateway(gatewaySet(10, "g", "c"))
	g := &snapshot.Snapshot{Member: "g"}
	exportService(t, g, "shop", "app", "2026-01-01T00:00:00Z", true,
		corev1.ServicePort{Name: "http", Port: 80}, tcpPort("redis", 6379), tcpPort("pg", 5432))
	exportService(t, g, "db", "store", "2026-01-02T00:00:00Z", true, tcpPort("raw", 9000))
	out, err := Render(cfg, []*snapshot.Snapshot{g, {Member: "c", Namespaces: g.Namespaces}}, nil)
	require.NoError(t, err)

	assert.Empty(t, objectsOfKind(out, "g", "ListenerSet"))
	gws := objectsOfKind(out, "g", "Gateway")
	require.Len(t, gws, 1)
	assert.Equal(t, "gw/gateway-east-west.yaml", gws[0].Path)
	gw := gws[0].Object.(*GatewayListeners)
	assert.Equal(t, "gw", gw.Namespace)
	assert.Equal(t, "east-west", gw.Name)
	assert.Empty(t, gw.Labels, "the user's Gateway gets no label of ours")
	// Allocation goes by namespace/name then Service port: db/store first.
	want := map[string]string{"mcs-tcp-30000": "db", "mcs-tcp-30001": "shop", "mcs-tcp-30002": "shop"}
	var names []string
	for _, l := range gw.Spec.Listeners {
		names = append(names, string(l.Name))
		assert.Equal(t, GatewayListenerName(int32(l.Port)), string(l.Name))
		assert.Equal(t, gatewayv1.TCPProtocolType, l.Protocol)
		require.NotNil(t, l.AllowedRoutes)
		assert.Equal(t, gatewayv1.NamespacesFromSelector, *l.AllowedRoutes.Namespaces.From)
		assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": want[string(l.Name)]}, l.AllowedRoutes.Namespaces.Selector.MatchLabels)
		assert.Equal(t, []gatewayv1.RouteGroupKind{{Group: ptr.To(gatewayv1.Group("gateway.networking.k8s.io")), Kind: "TCPRoute"}}, l.AllowedRoutes.Kinds)
	}
	assert.Equal(t, []string{"mcs-tcp-30000", "mcs-tcp-30001", "mcs-tcp-30002"}, names, "sorted by port")

	// Only apiVersion, kind, metadata and spec.listeners: no class, which
	// server-side apply would otherwise take from the user.
	js, err := json.Marshal(gw)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(js, &doc))
	assert.ElementsMatch(t, []string{"apiVersion", "kind", "metadata", "spec"}, keysOf(doc))
	assert.ElementsMatch(t, []string{"listeners"}, keysOf(doc["spec"].(map[string]any)))
	assert.ElementsMatch(t, []string{"name", "namespace"}, keysOf(doc["metadata"].(map[string]any)))

	sections := map[string]string{}
	for _, o := range objectsOfKind(out, "g", "TCPRoute") {
		r := o.Object.(*gatewayv1.TCPRoute)
		require.Len(t, r.Spec.ParentRefs, 1)
		p := r.Spec.ParentRefs[0]
		assert.Equal(t, "Gateway", string(*p.Kind))
		assert.Equal(t, "gw", string(*p.Namespace))
		assert.Equal(t, "east-west", string(p.Name))
		sections[r.Namespace+"/"+r.Name] = string(*p.SectionName)
	}
	assert.Equal(t, map[string]string{
		"db/store-clusterset-9000": "mcs-tcp-30000", "shop/app-clusterset-5432": "mcs-tcp-30001", "shop/app-clusterset-6379": "mcs-tcp-30002",
	}, sections)
	require.Len(t, objectsOfKind(out, "g", "HTTPRoute"), 1)
	assert.Empty(t, objectsOfKind(out, "c", "Gateway"), "the consumer's gateway carries nothing")
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A Gateway holds 64 listeners, like one ListenerSet, but it holds them
// for every export of the member: an export that would take the 65th
// gets none and says why, while with ListenerSets each export has 64.
func TestGatewayHoldsSixtyFourListenersForAllExports(t *testing.T) {
	ports := func(n int) []corev1.ServicePort {
		var out []corev1.ServicePort
		for i := range n {
			out = append(out, tcpPort(fmt.Sprintf("p%d", i), int32(1000+i)))
		}
		return out
	}
	snaps := func() []*snapshot.Snapshot {
		g := &snapshot.Snapshot{Member: "g"}
		exportService(t, g, "db", "a", "2026-01-01T00:00:00Z", true, ports(30)...)
		exportService(t, g, "db", "b", "2026-01-01T00:00:00Z", true, ports(30)...)
		exportService(t, g, "db", "c", "2026-01-01T00:00:00Z", true, ports(30)...)
		return []*snapshot.Snapshot{g, {Member: "c"}}
	}
	out, err := Render(listenersInGateway(gatewaySet(200, "g", "c")), snaps(), nil)
	require.NoError(t, err)
	assert.Len(t, allocationsOf(out, "g"), 60)
	ready, _ := exportOf(t, serviceReport(t, out, "db", "c"), "g").Condition("Ready")
	assert.Equal(t, ReasonPortRangeExhausted, ready.Reason)
	assert.Contains(t, ready.Message, "the 64 listeners a Gateway holds are taken")
	require.Len(t, objectsOfKind(out, "g", "Gateway"), 1)
	assert.Len(t, objectsOfKind(out, "g", "Gateway")[0].Object.(*GatewayListeners).Spec.Listeners, 60)

	perSet, err := Render(gatewaySet(200, "g", "c"), snaps(), nil)
	require.NoError(t, err)
	assert.Len(t, allocationsOf(perSet, "g"), 90, "one ListenerSet per export, 64 each")
	assert.Len(t, objectsOfKind(perSet, "g", "ListenerSet"), 3)

	// Switching to the Gateway with 90 committed allocations keeps no
	// more than 64: the third export keeps the few it still holds in the
	// record, but without all its ports it is rendered on no listener.
	switched, err := Render(listenersInGateway(gatewaySet(200, "g", "c")), snaps(), committedOf(perSet))
	require.NoError(t, err)
	assert.Len(t, allocationsOf(switched, "g"), 64)
	assert.Len(t, objectsOfKind(switched, "g", "Gateway")[0].Object.(*GatewayListeners).Spec.Listeners, 60)
	ready, _ = exportOf(t, serviceReport(t, switched, "db", "c"), "g").Condition("Ready")
	assert.Equal(t, ReasonPortRangeExhausted, ready.Reason)
}

// A weighted route needs a ListenerSet on the consumer's gateway; one
// whose listeners go into the Gateway cannot carry the weights, says so,
// and allocates nothing for them.
func TestWeightsNeedAListenerSetWhenListenersAreInTheGateway(t *testing.T) {
	cfg := listenersInGateway(gatewaySet(5, "c1", "c2", "c3"))
	pol := policy(v1alpha1.ActiveActive, target("c1", 30), target("c3", 70))
	out, err := Render(cfg, fsmWorld(t, true, true, nil, &pol), nil)
	require.NoError(t, err)
	p := serviceReport(t, out, "web", "site").Policies[0]
	assert.Equal(t, ReasonWeightsNotExpressible, p.Conditions[1].Reason)
	assert.Contains(t, p.Conditions[1].Message, "tcpListeners: Gateway")
	assert.Empty(t, objectsOfKind(out, "c2", "ListenerSet"))
	assert.Empty(t, allocationsOf(out, "c2"))
	assert.ElementsMatch(t, []string{"c1", "c3"}, sourcesIn(t, out, "c2"), "the sources stay, unweighted")
}
