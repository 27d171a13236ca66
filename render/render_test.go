// SPDX-License-Identifier: Apache-2.0

package render

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// clusterSetOf is a ClusterSet of the given members, in that order.
func clusterSetOf(members ...string) *v1alpha1.ClusterSet {
	cs := &v1alpha1.ClusterSet{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind, Metadata: v1alpha1.Metadata{Name: "test"}}
	for _, m := range members {
		cs.Spec.Members = append(cs.Spec.Members, v1alpha1.Member{Name: m})
	}
	cs.Default()
	return cs
}

func mustTime(t *testing.T, s string) metav1.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return metav1.NewTime(tm)
}

// importerSnapshot is a member that has the shop namespace and exports nothing.
func importerSnapshot(member string) *snapshot.Snapshot {
	return &snapshot.Snapshot{Member: member, Namespaces: []corev1.Namespace{*tenant.Namespace("shop")}}
}

// exporterSnapshot is a member exporting shop/cart, a ClusterIP Service with
// port http 80/TCP and one ready endpoint, as the apiserver would default
// it; edit changes the Service or ServiceExport before it is used. The
// slice is the unedited Service's, as it is just after the edit, before
// the endpoint slice controller catches up.
func exporterSnapshot(t *testing.T, member, created string, edit func(*corev1.Service, *mcsv1alpha1.ServiceExport)) *snapshot.Snapshot {
	t.Helper()
	s := importerSnapshot(member)
	se := tenant.Export("shop", "cart")
	se.CreationTimestamp = mustTime(t, created)
	svc := tenant.Service("shop", "cart")
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.ClusterIP = "10.96.0.10"
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	slice := tenant.Slice(svc, "cart-"+member, discoveryv1.AddressTypeIPv4, tenant.Ready("10.244.0.5")...)
	if edit != nil {
		edit(svc, se)
	}
	s.ServiceExports = []mcsv1alpha1.ServiceExport{*se}
	s.Services = []corev1.Service{*svc}
	s.EndpointSlices = []discoveryv1.EndpointSlice{*slice}
	return s
}

// cartReport renders and returns the report of shop/cart.
func cartReport(t *testing.T, cfg *v1alpha1.ClusterSet, snaps ...*snapshot.Snapshot) (*Output, ServiceReport) {
	t.Helper()
	out, err := Render(cfg, snaps, nil)
	require.NoError(t, err)
	require.Len(t, out.Report.Services, 1)
	rep := out.Report.Services[0]
	require.Equal(t, "shop/cart", rep.Namespace+"/"+rep.Name)
	return out, rep
}

// serviceImportIn returns the ServiceImport member renders for shop/cart.
func serviceImportIn(t *testing.T, out *Output, member string) *mcsv1alpha1.ServiceImport {
	t.Helper()
	for _, m := range out.Members {
		if m.Name != member {
			continue
		}
		for _, o := range m.Objects {
			if o.Path == "shop/cart/serviceimport.yaml" {
				si, ok := o.Object.(*mcsv1alpha1.ServiceImport)
				require.True(t, ok, "%T", o.Object)
				return si
			}
		}
	}
	t.Fatalf("member %s has no shop/cart ServiceImport", member)
	return nil
}

func exportOf(t *testing.T, rep ServiceReport, member string) ExportReport {
	t.Helper()
	for _, e := range rep.Exports {
		if e.Member == member {
			return e
		}
	}
	t.Fatalf("no export from %s in the report", member)
	return ExportReport{}
}

func conflictOf(t *testing.T, rep ServiceReport, member string) Condition {
	t.Helper()
	c, ok := exportOf(t, rep, member).Condition("Conflict")
	require.True(t, ok, "export from %s has no Conflict condition", member)
	return c
}

func TestPrecedence(t *testing.T) {
	type exp struct {
		member, created string
		port            int32
	}
	cases := []struct {
		name    string
		members []string // config order
		exports []exp
		// order is the expected precedence, winner first.
		order []string
	}{
		{
			name:    "oldest wins whatever the config order",
			members: []string{"a", "b", "c"},
			exports: []exp{{"a", "2026-09-03T10:00:00Z", 81}, {"b", "2026-09-01T10:00:00Z", 82}, {"c", "2026-09-02T10:00:00Z", 83}},
			order:   []string{"b", "c", "a"},
		},
		{
			name:    "one second apart is enough",
			members: []string{"a", "b"},
			exports: []exp{{"a", "2026-09-01T10:00:01Z", 81}, {"b", "2026-09-01T10:00:00Z", 82}},
			order:   []string{"b", "a"},
		},
		{
			name:    "tie broken by member name, not config order",
			members: []string{"west", "east"},
			exports: []exp{{"west", "2026-09-01T10:00:00Z", 81}, {"east", "2026-09-01T10:00:00Z", 82}},
			order:   []string{"east", "west"},
		},
		{
			name:    "tie among the later exports only",
			members: []string{"c", "b", "a"},
			exports: []exp{{"c", "2026-09-01T10:00:00Z", 83}, {"b", "2026-09-02T10:00:00Z", 82}, {"a", "2026-09-02T10:00:00Z", 81}},
			order:   []string{"c", "a", "b"},
		},
		{
			name:    "time zones compare as instants",
			members: []string{"a", "b"},
			exports: []exp{{"a", "2026-09-01T11:30:00+02:00", 81}, {"b", "2026-09-01T10:00:00Z", 82}},
			order:   []string{"a", "b"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var snaps []*snapshot.Snapshot
			ports := map[string]int32{}
			for _, e := range c.exports {
				ports[e.member] = e.port
				snaps = append(snaps, exporterSnapshot(t, e.member, e.created, func(svc *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
					svc.Spec.Ports[0].Port = e.port
				}))
			}
			out, rep := cartReport(t, clusterSetOf(c.members...), snaps...)

			var got []string
			for _, e := range rep.Exports {
				got = append(got, e.Member)
			}
			assert.Equal(t, c.order, got, "report order")

			// Every export uses port http with its own number, so the
			// ServiceImport shows whose port won.
			winner := c.order[0]
			for _, m := range c.members {
				si := serviceImportIn(t, out, m)
				require.Len(t, si.Spec.Ports, 1)
				assert.Equal(t, ports[winner], si.Spec.Ports[0].Port, "port in %s's ServiceImport", m)
			}
		})
	}
}

func TestConflictMessagesNameTheWinner(t *testing.T) {
	type edit = func(*corev1.Service, *mcsv1alpha1.ServiceExport)
	cases := []struct {
		name   string
		reason mcsv1alpha1.ServiceExportConditionReason
		// loser turns the default export into the newer, conflicting one.
		loser edit
		// winner, if set, adjusts the older export first.
		winner edit
	}{
		{"same name, other port", mcsv1alpha1.ServiceExportReasonPortConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) { s.Spec.Ports[0].Port = 8080 }, nil},
		{"same port, other name", mcsv1alpha1.ServiceExportReasonPortConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) { s.Spec.Ports[0].Name = "web" }, nil},
		// An unnamed port cannot join named ones: a Service with several
		// ports must name them all.
		{"unnamed port joining named ones", mcsv1alpha1.ServiceExportReasonPortConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
			s.Spec.Ports[0].Name = ""
			s.Spec.Ports[0].Port = 8080
		}, nil},
		{"", mcsv1alpha1.ServiceExportReasonTypeConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) { s.Spec.ClusterIP = corev1.ClusterIPNone }, nil},
		{"", mcsv1alpha1.ServiceExportReasonSessionAffinityConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}}
		}, nil},
		{"", mcsv1alpha1.ServiceExportReasonSessionAffinityConfigConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](60)}}
		}, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}}
		}},
		{"", mcsv1alpha1.ServiceExportReasonInternalTrafficPolicyConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
			s.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
		}, nil},
		{"", mcsv1alpha1.ServiceExportReasonTrafficDistributionConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
			s.Spec.TrafficDistribution = ptr.To("PreferClose")
		}, nil},
		{"", mcsv1alpha1.ServiceExportReasonIPFamilyConflict, func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		}, nil},
		{"", mcsv1alpha1.ServiceExportReasonLabelsConflict, func(_ *corev1.Service, se *mcsv1alpha1.ServiceExport) {
			se.Spec.ExportedLabels = map[string]string{"team": "checkout"}
		}, nil},
		{"", mcsv1alpha1.ServiceExportReasonAnnotationsConflict, func(_ *corev1.Service, se *mcsv1alpha1.ServiceExport) {
			se.Spec.ExportedAnnotations = map[string]string{"example.com/owner": "checkout"}
		}, nil},
	}
	for _, c := range cases {
		name := string(c.reason)
		if c.name != "" {
			name += "/" + c.name
		}
		t.Run(name, func(t *testing.T) {
			// zulu is older, so it wins although alpha comes first both in
			// the config and by name: a message naming alpha as the winner
			// would be wrong, not just lucky.
			cfg := clusterSetOf("alpha", "zulu")
			alpha := exporterSnapshot(t, "alpha", "2026-09-02T10:00:00Z", c.loser)
			zulu := exporterSnapshot(t, "zulu", "2026-09-01T10:00:00Z", c.winner)
			_, rep := cartReport(t, cfg, alpha, zulu)

			lost := conflictOf(t, rep, "alpha")
			assert.Equal(t, "True", lost.Status)
			assert.Equal(t, string(c.reason), lost.Reason, "only the one property differs")
			assert.Contains(t, lost.Message, "zulu's export, created earlier")
			assert.Regexp(t, `zulu('s port)? wins|zulu's ports win`, lost.Message)
			assert.NotContains(t, lost.Message, "alpha")

			won := conflictOf(t, rep, "zulu")
			assert.Equal(t, "True", won.Status, "Conflict=True goes on every export involved")
			assert.Equal(t, string(c.reason), won.Reason)
			assert.Contains(t, won.Message, "alpha")
			assert.Contains(t, won.Message, "wins")
		})
	}
}

// With equal creation times only the cluster ID decides, and no message
// may claim that the winner is older.
func TestTieMessagesDoNotClaimAge(t *testing.T) {
	cfg := clusterSetOf("west", "east")
	west := exporterSnapshot(t, "west", "2026-09-01T10:00:00Z", func(s *corev1.Service, se *mcsv1alpha1.ServiceExport) {
		s.Spec.Ports[0].Port = 8080
		se.Spec.ExportedLabels = map[string]string{"team": "west"}
	})
	east := exporterSnapshot(t, "east", "2026-09-01T10:00:00Z", nil)
	_, rep := cartReport(t, cfg, west, east)

	for _, m := range []string{"west", "east"} {
		c := conflictOf(t, rep, m)
		assert.Equal(t, "PortConflict,LabelsConflict", c.Reason)
		assert.NotContains(t, c.Message, "earlier", m)
		assert.NotContains(t, c.Message, "older", m)
		assert.NotContains(t, c.Message, "oldest and wins", m)
		assert.Contains(t, c.Message, "cluster ID", m)
	}
	assert.Contains(t, conflictOf(t, rep, "west").Message, "east wins")
}

func TestCombinedConflictReasonsKeepAFixedOrder(t *testing.T) {
	cfg := clusterSetOf("a", "b")
	a := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", nil)
	// Set in the opposite of the documented order, so that an order taken
	// from the input would show.
	b := exporterSnapshot(t, "b", "2026-09-02T10:00:00Z", func(s *corev1.Service, se *mcsv1alpha1.ServiceExport) {
		se.Spec.ExportedAnnotations = map[string]string{"x": "y"}
		se.Spec.ExportedLabels = map[string]string{"x": "y"}
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		s.Spec.ClusterIP = corev1.ClusterIPNone
		s.Spec.Ports[0].Port = 81
	})
	_, rep := cartReport(t, cfg, a, b)
	want := "PortConflict,TypeConflict,SessionAffinityConflict,LabelsConflict,AnnotationsConflict"
	assert.Equal(t, want, conflictOf(t, rep, "a").Reason)
	assert.Equal(t, want, conflictOf(t, rep, "b").Reason)
}

// KEP-1645: once a service is conflicted, Conflict=True goes on all of its
// exports. A third export that agrees with the winner is conflicted too,
// and its message names the export that differs.
func TestEveryExportOfAConflictedServiceIsConflicted(t *testing.T) {
	cfg := clusterSetOf("a", "b", "c")
	a := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", nil)
	b := exporterSnapshot(t, "b", "2026-09-02T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	})
	c := exporterSnapshot(t, "c", "2026-09-03T10:00:00Z", nil)
	_, rep := cartReport(t, cfg, a, b, c)
	for _, m := range []string{"a", "b", "c"} {
		cc := conflictOf(t, rep, m)
		assert.Equal(t, "True", cc.Status, m)
		assert.Equal(t, string(mcsv1alpha1.ServiceExportReasonSessionAffinityConflict), cc.Reason, m)
	}
	cc := conflictOf(t, rep, "c").Message
	assert.Contains(t, cc, "export of b", "names the export that differs")
	assert.Contains(t, cc, "agrees with a's", "says whose value it shares")
}

// KEP-1645 "Service Port" (kubernetes/enhancements#5706): the ClusterSet
// service exposes the union of the exports' ports and raises PortConflict
// when the port sets are not all equal, even when no two ports clash.
func TestPortUnionIsAConflict(t *testing.T) {
	cfg := clusterSetOf("a", "b", "c")
	a := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 9000})
	})
	b := exporterSnapshot(t, "b", "2026-09-02T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090})
	})
	// c has the same ports as a: it agrees with the winner, but the
	// service is conflicted, so it is too.
	c := exporterSnapshot(t, "c", "2026-09-03T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 9000})
	})
	out, rep := cartReport(t, cfg, a, b, c)
	for _, m := range []string{"a", "b", "c"} {
		cc := conflictOf(t, rep, m)
		assert.Equal(t, "True", cc.Status, m)
		assert.Equal(t, string(mcsv1alpha1.ServiceExportReasonPortConflict), cc.Reason, m)
	}
	assert.Contains(t, conflictOf(t, rep, "a").Message, "b")
	assert.NotContains(t, conflictOf(t, rep, "c").Message, "a's export", "c's ports equal a's")
	assert.Contains(t, conflictOf(t, rep, "c").Message, "b")
	var names []string
	for _, p := range serviceImportIn(t, out, "a").Spec.Ports {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"http", "grpc", "metrics"}, names, "the union, in precedence order")

	// Equal port sets in another order are not a conflict.
	d := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
		s.Spec.Ports = append([]corev1.ServicePort{{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 9000}}, s.Spec.Ports...)
	})
	_, rep = cartReport(t, clusterSetOf("a", "c"), d, c)
	assert.Equal(t, "False", conflictOf(t, rep, "a").Status)
	assert.Equal(t, "False", conflictOf(t, rep, "c").Status)
}

// Ties on creationTimestamp break by cluster ID, the identity status.clusters
// and the source-cluster label publish, not by the name in clusterset.yaml.
func TestTieBreaksByClusterID(t *testing.T) {
	cfg := clusterSetOf("alpha", "zulu")
	cfg.Spec.Members[0].ClusterID = "zz-cluster"
	cfg.Spec.Members[1].ClusterID = "aa-cluster"
	alpha := exporterSnapshot(t, "alpha", "2026-09-01T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) { s.Spec.Ports[0].Port = 81 })
	zulu := exporterSnapshot(t, "zulu", "2026-09-01T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) { s.Spec.Ports[0].Port = 82 })
	out, rep := cartReport(t, cfg, alpha, zulu)
	assert.Equal(t, "zulu", rep.Exports[0].Member, "aa-cluster sorts first")
	assert.Equal(t, int32(82), serviceImportIn(t, out, "alpha").Spec.Ports[0].Port)
	assert.Contains(t, conflictOf(t, rep, "alpha").Message, "cluster ID")
}

// A source whose port of the import's name differs in number or protocol
// does not offer it: traffic to that port goes only to endpoints that
// expose it (KEP-1645 "Service Port").
func TestSlicesCarryOnlyThePortsRoutedToTheirSource(t *testing.T) {
	cfg := clusterSetOf("a", "b", "c")
	a := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", nil)
	b := exporterSnapshot(t, "b", "2026-09-02T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
		s.Spec.Ports[0].Port = 8080 // http 8080 loses to a's http 80
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090})
	})
	b.EndpointSlices[0].Ports = append(b.EndpointSlices[0].Ports, discoveryv1.EndpointPort{Name: ptr.To("metrics"), Port: ptr.To[int32](9090), Protocol: ptr.To(corev1.ProtocolTCP)})
	out, err := Render(cfg, []*snapshot.Snapshot{a, b, importerSnapshot("c")}, nil)
	require.NoError(t, err)
	got := map[string][]string{}
	for _, o := range out.Members[2].Objects {
		if sl, ok := o.Object.(*discoveryv1.EndpointSlice); ok {
			var ports []string
			for _, p := range sl.Ports {
				ports = append(ports, *p.Name)
			}
			got[sl.Labels[mcsv1alpha1.LabelSourceCluster]] = ports
		}
	}
	assert.Equal(t, map[string][]string{"a": {"http"}, "b": {"metrics"}}, got)
}

func TestRenderErrors(t *testing.T) {
	withID := func(s *snapshot.Snapshot, id string) *snapshot.Snapshot {
		s.ClusterID, s.ClusterIDAt = id, "inputs/"+s.Member+".yaml:7"
		return s
	}
	cases := []struct {
		name  string
		cfg   *v1alpha1.ClusterSet
		snaps []*snapshot.Snapshot
		// want are substrings the error must hold to be actionable.
		want []string
	}{
		{
			name:  "two ClusterProperties with the same ID",
			cfg:   clusterSetOf("a", "b"),
			snaps: []*snapshot.Snapshot{withID(importerSnapshot("a"), "prod"), withID(importerSnapshot("b"), "prod")},
			want:  []string{`"a"`, `"b"`, `"prod"`, "unique", "inputs/a.yaml:7", "inputs/b.yaml:7"},
		},
		{
			name:  "a ClusterProperty ID equal to another member's name",
			cfg:   clusterSetOf("a", "b"),
			snaps: []*snapshot.Snapshot{withID(importerSnapshot("a"), "b"), importerSnapshot("b")},
			want:  []string{`"a"`, `"b"`, "unique", "inputs/a.yaml:7", "its member name"},
		},
		{
			// Valid for KEP-2149, which allows a DNS subdomain, but the ID
			// must also be a label value.
			name:  "ClusterProperty ID with dots",
			cfg:   clusterSetOf("a"),
			snaps: []*snapshot.Snapshot{withID(importerSnapshot("a"), "a.prod.example.com")},
			want:  []string{`"a.prod.example.com"`, mcsv1alpha1.LabelSourceCluster, "clusterID", "ClusterProperty cluster.clusterset.k8s.io at inputs/a.yaml:7"},
		},
		{
			name:  "ClusterProperty ID longer than a label value",
			cfg:   clusterSetOf("a"),
			snaps: []*snapshot.Snapshot{withID(importerSnapshot("a"), strings.Repeat("a", 64))},
			want:  []string{strings.Repeat("a", 64), mcsv1alpha1.LabelSourceCluster},
		},
		{
			name:  "ClusterProperty ID with upper case",
			cfg:   clusterSetOf("a"),
			snaps: []*snapshot.Snapshot{withID(importerSnapshot("a"), "Prod")},
			want:  []string{`"Prod"`, mcsv1alpha1.LabelSourceCluster},
		},
		{
			name:  "a member without a snapshot",
			cfg:   clusterSetOf("a", "b"),
			snaps: []*snapshot.Snapshot{importerSnapshot("a")},
			want:  []string{`"b"`, "no snapshot"},
		},
		{
			name:  "a snapshot of no member",
			cfg:   clusterSetOf("a"),
			snaps: []*snapshot.Snapshot{importerSnapshot("a"), importerSnapshot("ghost")},
			want:  []string{`"ghost"`, "no such member"},
		},
		{
			name:  "two snapshots of one member",
			cfg:   clusterSetOf("a"),
			snaps: []*snapshot.Snapshot{importerSnapshot("a"), importerSnapshot("a")},
			want:  []string{`"a"`, "two snapshots"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Render(c.cfg, c.snaps, nil)
			require.Error(t, err)
			assert.Nil(t, out)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The remedy the error suggests works: a clusterID in clusterset.yaml
// replaces an unusable ClusterProperty, with a warning, and is what the
// slices are labelled with.
func TestClusterIDOverrideReplacesUnusableProperty(t *testing.T) {
	cfg := clusterSetOf("a", "b")
	cfg.Spec.Members[0].ClusterID = "prod-a"
	a := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", nil)
	a.ClusterID = "a.prod.example.com"
	out, err := Render(cfg, []*snapshot.Snapshot{a, importerSnapshot("b")}, nil)
	require.NoError(t, err)
	require.Len(t, out.Report.Warnings, 1)
	assert.Contains(t, out.Report.Warnings[0], "a.prod.example.com")
	assert.Equal(t, "prod-a", out.Members[0].ClusterID)

	var labels []string
	for _, o := range out.Members[1].Objects {
		if sl, ok := o.Object.(*discoveryv1.EndpointSlice); ok {
			labels = append(labels, sl.Labels[mcsv1alpha1.LabelSourceCluster])
		}
	}
	assert.Equal(t, []string{"prod-a"}, labels)
}

func TestReadyEndpoints(t *testing.T) {
	slice := func(family discoveryv1.AddressType, ready ...*bool) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{AddressType: family}
		for _, r := range ready {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"x"}, Conditions: discoveryv1.EndpointConditions{Ready: r}})
		}
		return s
	}
	yes, no := ptr.To(true), ptr.To(false)
	cases := []struct {
		name   string
		slices []*discoveryv1.EndpointSlice
		want   int
	}{
		{"none", nil, 0},
		{"not ready is not counted", []*discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, yes, no, yes)}, 2},
		{"unknown readiness counts as ready", []*discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, nil)}, 1},
		{"slices of one family add up", []*discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, yes, yes), slice(discoveryv1.AddressTypeIPv4, yes)}, 3},
		// Each dual-stack pod is in one slice per family.
		{"dual stack counts pods once", []*discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, yes, yes), slice(discoveryv1.AddressTypeIPv6, yes, yes)}, 2},
		{"dual stack mid-update takes the larger family", []*discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, yes, yes, yes), slice(discoveryv1.AddressTypeIPv6, yes, no, yes)}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, readyEndpoints(c.slices))
		})
	}
}

// An exported label or annotation with a key mcs-gitops uses to mark what
// it owns is left off the ServiceImport and reported, never silently
// overwritten.
func TestReservedExportedKeysAreReported(t *testing.T) {
	a := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", func(_ *corev1.Service, se *mcsv1alpha1.ServiceExport) {
		se.Spec.ExportedLabels = map[string]string{"team": "shop", ManagedByLabel: "helm", "mcs-gitops.io/member": "b"}
		se.Spec.ExportedAnnotations = map[string]string{DerivedServiceAnnotation: "derived-fake", "note": "x"}
	})
	out, rep := cartReport(t, clusterSetOf("a", "b"), a, importerSnapshot("b"))
	si := serviceImportIn(t, out, "b")
	assert.Equal(t, map[string]string{"team": "shop", ManagedByLabel: ManagedByValue}, si.Labels)
	assert.Equal(t, map[string]string{"note": "x", DerivedServiceAnnotation: DerivedServiceName("shop", "cart")}, si.Annotations)
	require.Len(t, rep.Warnings, 1)
	for _, k := range []string{"label " + ManagedByLabel, "label mcs-gitops.io/member", "annotation " + DerivedServiceAnnotation} {
		assert.Contains(t, rep.Warnings[0], k)
	}
	assert.Contains(t, rep.Warnings[0], "export of a")
}

// A hand-written snapshot's Service may set no ipFamilies: that export
// neither wins nor conflicts on families, and the import takes the oldest
// export that sets them.
func TestExportWithoutIPFamiliesDoesNotConflictOnThem(t *testing.T) {
	a := exporterSnapshot(t, "a", "2026-09-01T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) { s.Spec.IPFamilies = nil })
	b := exporterSnapshot(t, "b", "2026-09-02T10:00:00Z", func(s *corev1.Service, _ *mcsv1alpha1.ServiceExport) {
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	})
	out, rep := cartReport(t, clusterSetOf("a", "b"), a, b)
	assert.Equal(t, "False", conflictOf(t, rep, "a").Status)
	assert.Equal(t, "False", conflictOf(t, rep, "b").Status)
	assert.Equal(t, []corev1.IPFamily{corev1.IPv6Protocol}, serviceImportIn(t, out, "a").Spec.IPFamilies, "b is the oldest export that sets families")
}
