// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// export is one member's ServiceExport with the Service and EndpointSlices
// it exports.
type export struct {
	m      *member
	se     *mcsv1alpha1.ServiceExport
	svc    *corev1.Service
	slices []*discoveryv1.EndpointSlice
	// ready counts the ready endpoints of slices, once: the report, every
	// policy and every consumer's gateway slice ask.
	ready int
	// rejected describes the export's objects that were left out at
	// collect because they do not load; any makes the export invalid.
	rejected []string
	// outside is why the reach policy refuses the export (a reason and a
	// message naming the rule), or zero; it makes the export invalid.
	outside struct{ reason, msg string }
	// intent is the export's importers annotation, nil without one.
	intent labels.Selector
}

// ReasonUnloadable is the Valid=False reason of an export one of whose
// objects (the ServiceExport, its Service or an EndpointSlice) the member's
// apiserver accepted but mcs-gitops cannot load.
const ReasonUnloadable mcsv1alpha1.ServiceExportConditionReason = "Unloadable"

func (e *export) headless() bool { return e.svc.Spec.ClusterIP == corev1.ClusterIPNone }

// importType maps a Service to its ServiceImport type: ClusterIP, NodePort
// and LoadBalancer all become ClusterSetIP; only headlessness matters.
func (e *export) importType() mcsv1alpha1.ServiceImportType {
	if e.headless() {
		return mcsv1alpha1.Headless
	}
	return mcsv1alpha1.ClusterSetIP
}

// olderThan orders exports by precedence: oldest ServiceExport first,
// ties broken by cluster ID (KEP-1645 conflict resolution). The cluster ID
// is the identity status.clusters and the source-cluster label publish;
// the member's name in clusterset.yaml is local to this tool.
func (e *export) olderThan(o *export) bool {
	a, b := e.se.CreationTimestamp, o.se.CreationTimestamp
	if !a.Equal(&b) {
		return a.Before(&b)
	}
	return e.m.clusterID < o.m.clusterID
}

// merged is the ServiceImport-to-be: the properties that won, and every
// conflict found on the way.
type merged struct {
	ports      []mcsv1alpha1.ServicePort
	portOwner  []*export
	winner     *export
	valid      []*export
	conflicts  map[*export][]conflict
	importType mcsv1alpha1.ServiceImportType
	// families are the import's IP families: those of the oldest export
	// whose Service sets any (the ipFamilies rule is optional, so this is
	// also its winner); nil when none does.
	families []corev1.IPFamily
}

type conflict struct {
	reason  mcsv1alpha1.ServiceExportConditionReason
	message string
}

// conflictOrder fixes the order reasons appear in when several combine.
var conflictOrder = []mcsv1alpha1.ServiceExportConditionReason{
	mcsv1alpha1.ServiceExportReasonPortConflict,
	mcsv1alpha1.ServiceExportReasonTypeConflict,
	mcsv1alpha1.ServiceExportReasonSessionAffinityConflict,
	mcsv1alpha1.ServiceExportReasonSessionAffinityConfigConflict,
	mcsv1alpha1.ServiceExportReasonInternalTrafficPolicyConflict,
	mcsv1alpha1.ServiceExportReasonTrafficDistributionConflict,
	mcsv1alpha1.ServiceExportReasonIPFamilyConflict,
	mcsv1alpha1.ServiceExportReasonLabelsConflict,
	mcsv1alpha1.ServiceExportReasonAnnotationsConflict,
}

// scalarRules are the properties where the oldest export wins outright.
var scalarRules = []struct {
	reason mcsv1alpha1.ServiceExportConditionReason
	what   string
	get    func(*export) any
	// optional properties may be unset (nil) in a hand-written snapshot:
	// an unset value neither wins nor conflicts, and the oldest export
	// that sets one decides.
	optional bool
}{
	{mcsv1alpha1.ServiceExportReasonTypeConflict, "type", func(e *export) any { return e.importType() }, false},
	{mcsv1alpha1.ServiceExportReasonSessionAffinityConflict, "sessionAffinity", func(e *export) any { return sessionAffinity(e.svc) }, false},
	{mcsv1alpha1.ServiceExportReasonSessionAffinityConfigConflict, "sessionAffinityConfig", func(e *export) any { return sessionAffinityConfig(e.svc) }, false},
	{mcsv1alpha1.ServiceExportReasonInternalTrafficPolicyConflict, "internalTrafficPolicy", func(e *export) any { return internalTrafficPolicy(e.svc) }, false},
	{mcsv1alpha1.ServiceExportReasonTrafficDistributionConflict, "trafficDistribution", func(e *export) any { return deref(e.svc.Spec.TrafficDistribution) }, false},
	{mcsv1alpha1.ServiceExportReasonIPFamilyConflict, "ipFamilies", func(e *export) any { return ipFamilies(e.svc) }, true},
	{mcsv1alpha1.ServiceExportReasonLabelsConflict, "exportedLabels", func(e *export) any { return e.se.Spec.ExportedLabels }, false},
	{mcsv1alpha1.ServiceExportReasonAnnotationsConflict, "exportedAnnotations", func(e *export) any { return e.se.Spec.ExportedAnnotations }, false},
}

// ipFamilies is nil, not an empty list, when the Service sets none.
func ipFamilies(s *corev1.Service) any {
	if len(s.Spec.IPFamilies) == 0 {
		return nil
	}
	return s.Spec.IPFamilies
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// internalTrafficPolicy treats unset as Cluster, the apiserver's default,
// so a hand-written snapshot does not conflict with a defaulted one.
func internalTrafficPolicy(s *corev1.Service) corev1.ServiceInternalTrafficPolicy {
	if s.Spec.InternalTrafficPolicy == nil {
		return corev1.ServiceInternalTrafficPolicyCluster
	}
	return *s.Spec.InternalTrafficPolicy
}

func sessionAffinity(s *corev1.Service) corev1.ServiceAffinity {
	if s.Spec.SessionAffinity == "" {
		return corev1.ServiceAffinityNone
	}
	return s.Spec.SessionAffinity
}

// sessionAffinityConfig is only meaningful with ClientIP affinity; comparing
// it otherwise would report conflicts that change nothing.
func sessionAffinityConfig(s *corev1.Service) *corev1.SessionAffinityConfig {
	if sessionAffinity(s) != corev1.ServiceAffinityClientIP {
		return nil
	}
	return s.Spec.SessionAffinityConfig
}

func equalValues(a, b any) bool {
	if am, ok := a.(map[string]string); ok {
		bm, _ := b.(map[string]string)
		return maps.Equal(am, bm)
	}
	return reflect.DeepEqual(a, b)
}

// merge applies KEP-1645 conflict resolution to the valid exports of one
// service, which must already be in precedence order. Once a property is
// conflicted, every export gets Conflict=True for it (KEP-1645
// "Constraints and Conflict Resolution"): the ones that differ, the winner,
// and the ones that agree with the winner.
func merge(valid []*export) *merged {
	m := &merged{winner: valid[0], valid: valid, conflicts: map[*export][]conflict{}, importType: valid[0].importType()}
	for _, e := range valid {
		m.mergePorts(e)
	}
	m.portSetConflicts()
	for _, e := range valid {
		if len(e.svc.Spec.IPFamilies) > 0 {
			m.families = e.svc.Spec.IPFamilies
			break
		}
	}
	for _, rule := range scalarRules {
		owner := m.winner
		want := rule.get(owner)
		if rule.optional && want == nil {
			for _, e := range valid[1:] {
				if v := rule.get(e); v != nil {
					owner, want = e, v
					break
				}
			}
		}
		var losers, agree []*export
		oldest := "this export is the oldest and wins"
		for _, e := range valid {
			if e == owner {
				continue
			}
			// With different affinities the config is moot: the
			// SessionAffinityConflict already says what loses.
			if rule.reason == mcsv1alpha1.ServiceExportReasonSessionAffinityConfigConflict && sessionAffinity(e.svc) != sessionAffinity(m.winner.svc) {
				continue
			}
			got := rule.get(e)
			if rule.optional && got == nil {
				continue
			}
			if equalValues(want, got) {
				agree = append(agree, e)
				continue
			}
			losers = append(losers, e)
			if tied(owner, e) {
				oldest = "this export is among the oldest and first by cluster ID, so it wins"
			}
			m.add(e, rule.reason, fmt.Sprintf("%s %s differs from %s's export, %s; %s wins",
				rule.what, describe(got), owner.m.name, precedes(owner, e), owner.m.name))
		}
		if len(losers) == 0 {
			continue
		}
		names := memberNames(losers)
		m.add(owner, rule.reason, fmt.Sprintf("%s differs in the export of %s; %s", rule.what, names, oldest))
		for _, e := range agree {
			m.add(e, rule.reason, fmt.Sprintf("%s differs in the export of %s; this export's agrees with %s's, which wins",
				rule.what, names, owner.m.name))
		}
	}
	return m
}

func memberNames(es []*export) string {
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.m.name
	}
	return strings.Join(names, ", ")
}

// portSetConflicts raises PortConflict on every export when the exports'
// port sets are not all equal, even when no two ports clash: the import
// exposes the union, so some of its ports reach only some exporters
// (KEP-1645 "Service Port", as amended by kubernetes/enhancements#5706).
// An export whose ports clashed already has its message.
func (m *merged) portSetConflicts() {
	sets := make([]string, len(m.valid))
	for i, e := range m.valid {
		sets[i] = portSet(e)
	}
	var union []string
	for _, p := range m.ports {
		union = append(union, describePort(p))
	}
	for i, e := range m.valid {
		if m.hasConflict(e, mcsv1alpha1.ServiceExportReasonPortConflict) {
			continue
		}
		var differ []*export
		for j, o := range m.valid {
			if sets[j] != sets[i] {
				differ = append(differ, o)
			}
		}
		if len(differ) == 0 {
			continue
		}
		m.add(e, mcsv1alpha1.ServiceExportReasonPortConflict, fmt.Sprintf(
			"the ports of the export of %s differ from this export's (%s); the ServiceImport exposes their union (%s), each port routed only to the exports that have it",
			memberNames(differ), sets[i], strings.Join(union, ", ")))
	}
}

// portSet is an export's ports as a comparable string, order-independent:
// a Service may list the same ports in any order.
func portSet(e *export) string {
	ps := make([]string, 0, len(e.svc.Spec.Ports))
	for _, p := range e.svc.Spec.Ports {
		ps = append(ps, describePort(importPort(p)))
	}
	sort.Strings(ps)
	if len(ps) == 0 {
		return "no ports"
	}
	return strings.Join(ps, ", ")
}

func importPort(p corev1.ServicePort) mcsv1alpha1.ServicePort {
	return mcsv1alpha1.ServicePort{Name: p.Name, Protocol: protocol(p.Protocol), AppProtocol: p.AppProtocol, Port: p.Port}
}

func (m *merged) hasConflict(e *export, reason mcsv1alpha1.ServiceExportConditionReason) bool {
	for _, c := range m.conflicts[e] {
		if c.reason == reason {
			return true
		}
	}
	return false
}

func (m *merged) add(e *export, reason mcsv1alpha1.ServiceExportConditionReason, msg string) {
	m.conflicts[e] = append(m.conflicts[e], conflict{reason, msg})
}

// mergePorts adds an export's ports to the union, matched first by name,
// then by (protocol, port). A port that clashes with one already in the
// union is dropped and both exports are marked PortConflict. The union may
// hold an unnamed port only while it is the only port, because a Service
// with several ports must name them all.
func (m *merged) mergePorts(e *export) {
	for _, p := range e.svc.Spec.Ports {
		sp := importPort(p)
		clash := -1
		for i, have := range m.ports {
			if have.Name == sp.Name || (have.Protocol == sp.Protocol && have.Port == sp.Port) {
				clash = i
				break
			}
		}
		if clash >= 0 {
			have, owner := m.ports[clash], m.portOwner[clash]
			if have.Name == sp.Name && have.Protocol == sp.Protocol && have.Port == sp.Port && equalValues(deref(have.AppProtocol), deref(sp.AppProtocol)) {
				continue
			}
			if owner != e {
				m.add(e, mcsv1alpha1.ServiceExportReasonPortConflict, fmt.Sprintf("port %s conflicts with port %s of %s's export, %s; %s's port wins",
					describePort(sp), describePort(have), owner.m.name, precedes(owner, e), owner.m.name))
				m.add(owner, mcsv1alpha1.ServiceExportReasonPortConflict, fmt.Sprintf("port %s of %s's export conflicts with this export's port %s; %s",
					describePort(sp), e.m.name, describePort(have), winsOver(owner, e)))
			}
			continue
		}
		if len(m.ports) > 0 && (sp.Name == "" || m.ports[0].Name == "") {
			other := m.portOwner[0]
			m.add(e, mcsv1alpha1.ServiceExportReasonPortConflict, fmt.Sprintf("port %s cannot join the ports of %s's export, %s: a multi-port service needs every port named; %s's ports win",
				describePort(sp), other.m.name, precedes(other, e), other.m.name))
			if other != e {
				m.add(other, mcsv1alpha1.ServiceExportReasonPortConflict, fmt.Sprintf("%s's export adds port %s, but a multi-port service needs every port named; %s",
					e.m.name, describePort(sp), winsOver(other, e)))
			}
			continue
		}
		m.ports = append(m.ports, sp)
		m.portOwner = append(m.portOwner, e)
	}
}

// tied reports whether two exports were created at the same time, so that
// only the cluster ID orders them; messages must not call either older.
func tied(a, b *export) bool {
	return a.se.CreationTimestamp.Equal(&b.se.CreationTimestamp)
}

// precedes says why w's export beats l's, for l's condition message.
func precedes(w, l *export) string {
	if tied(w, l) {
		return "created at the same time and first by cluster ID"
	}
	return "created earlier"
}

// winsOver says why w's export beats l's, for w's condition message.
func winsOver(w, l *export) string {
	if tied(w, l) {
		return "this export was created at the same time and is first by cluster ID, so it wins"
	}
	return "this export is older and wins"
}

func protocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

func describePort(p mcsv1alpha1.ServicePort) string {
	s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
	if p.Name != "" {
		s = fmt.Sprintf("%q %s", p.Name, s)
	}
	if p.AppProtocol != nil {
		s += " appProtocol " + *p.AppProtocol
	}
	return s
}

// describe prints a property value for a person reading a condition.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "(unset)"
	case map[string]string:
		if len(x) == 0 {
			return "{}"
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + x[k]
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []corev1.IPFamily:
		if len(x) == 0 {
			return "(unset)"
		}
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = string(f)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *corev1.SessionAffinityConfig:
		if x == nil || x.ClientIP == nil || x.ClientIP.TimeoutSeconds == nil {
			return "(unset)"
		}
		return fmt.Sprintf("clientIP.timeoutSeconds=%d", *x.ClientIP.TimeoutSeconds)
	}
	return fmt.Sprintf("%v", v)
}

// conditions builds the Valid/Conflict/Ready conditions of a valid export.
func (m *merged) conditions(e *export, importers int, partial []PartialPort) []Condition {
	out := []Condition{{Type: "Valid", Status: "True", Reason: string(mcsv1alpha1.ServiceExportReasonValid), Message: "the Service can be exported"}}
	cs := m.conflicts[e]
	if len(cs) == 0 {
		out = append(out, Condition{Type: "Conflict", Status: "False", Reason: string(mcsv1alpha1.ServiceExportReasonNoConflicts), Message: "no conflicts with other exports of this service"})
	} else {
		var reasons, msgs []string
		for _, r := range conflictOrder {
			found := false
			for _, c := range cs {
				if c.reason == r {
					found = true
					msgs = append(msgs, c.message)
				}
			}
			if found {
				reasons = append(reasons, string(r))
			}
		}
		out = append(out, Condition{Type: "Conflict", Status: "True", Reason: strings.Join(reasons, ","), Message: strings.Join(msgs, "; ")})
	}
	out = append(out, Condition{Type: "Ready", Status: "True", Reason: string(mcsv1alpha1.ServiceExportReasonExported),
		Message: fmt.Sprintf("rendered for %d member(s)", importers) + PartialPortsNote(partial, familyNames(m.families))})
	return out
}

// servesNothing turns the Ready condition of an export whose every port
// lost a conflict to False: it is valid, and the Conflict condition says
// why it lost, but no member sends it traffic, and saying Exported would
// hide that its endpoints are not capacity.
func servesNothing(conds []Condition, m *merged, e *export) []Condition {
	ports := make([]string, len(m.ports))
	for i, p := range m.ports {
		ports[i] = describePort(p)
	}
	out := slices.Clone(conds)
	for i, c := range out {
		if c.Type == "Ready" {
			out[i] = Condition{Type: "Ready", Status: "False", Reason: string(mcsv1alpha1.ServiceExportReasonFailed),
				Message: fmt.Sprintf("not exported: none of its ports is a port of the ServiceImport (%s), so no member sends it traffic: its %d ready endpoint(s) serve nothing",
					strings.Join(ports, ", "), e.ready)}
		}
	}
	return out
}

// invalidConditions explains why an export does not contribute.
func invalidConditions(reason mcsv1alpha1.ServiceExportConditionReason, msg string) []Condition {
	return []Condition{
		{Type: "Valid", Status: "False", Reason: string(reason), Message: msg},
		{Type: "Ready", Status: "False", Reason: string(mcsv1alpha1.ServiceExportReasonFailed), Message: "not exported: " + msg},
	}
}

func familyNames(fams []corev1.IPFamily) []string {
	out := make([]string, len(fams))
	for i, f := range fams {
		out[i] = string(f)
	}
	return out
}
