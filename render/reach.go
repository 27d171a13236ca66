// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// ImportersAnnotation on a ServiceExport is the app's intent, within the
// platform's reach policy: a label selector over the members' labels
// (spec.members[].labels, and MemberNameLabel, each member's name) naming
// the members that should import the service. KEP-1645's amendment for
// per-service sets of clusters (kubernetes/enhancements#6329) is heading
// for a field; once mcs-api has it, it is read into the same intent and
// the annotation stays as an alias.
const ImportersAnnotation = snapshot.ImportersAnnotation

// MemberNameLabel is the label every member has in reach selectors: its
// name.
const MemberNameLabel = "mcs-gitops.io/member"

// Reasons an export or an import is outside the reach policy.
const (
	// ReasonNamespaceNotExported: spec.reach exports no service of the
	// namespace.
	ReasonNamespaceNotExported = "NamespaceNotExported"
	// ReasonNamespaceNotShared: the exporting member does not share the
	// namespace's identity (spec.reach.namespaces[].members).
	ReasonNamespaceNotShared = "NamespaceNotShared"
	// ReasonInvalidImporters: the export's importers annotation is not a
	// label selector.
	ReasonInvalidImporters = "InvalidImporters"
)

// reach is spec.reach as render applies it.
type reach struct {
	policy v1alpha1.ReachPolicy
	byNS   map[string]*v1alpha1.NamespaceReach
}

func newReach(p v1alpha1.ReachPolicy) reach {
	r := reach{policy: p, byNS: map[string]*v1alpha1.NamespaceReach{}}
	for i := range p.Namespaces {
		r.byNS[p.Namespaces[i].Name] = &p.Namespaces[i]
	}
	return r
}

// exportProblem says why member m may not export services of namespace
// ns under the policy: a reason and a message naming the rule, or "".
func (r reach) exportProblem(ns string, m *member) (reason, msg string) {
	n := r.byNS[ns]
	switch {
	case n == nil && r.policy.Unlisted == v1alpha1.ReachNone:
		return ReasonNamespaceNotExported, fmt.Sprintf("namespace %s is not exported: spec.reach lists it nowhere and spec.reach.unlisted is none", ns)
	case n != nil && n.Members != nil && !n.Members.Matches(m.name, m.labels):
		return ReasonNamespaceNotShared, fmt.Sprintf("member %s does not share namespace %s (spec.reach.namespaces[%s].members): its export is not the ClusterSet's service", m.name, ns, ns)
	}
	return "", ""
}

// importRule says which rule, if any, keeps member m from importing
// ns/name: the namespace not shared with it, the service's importers, or
// the export's intent (nil: none). "" when it may import.
func (r reach) importRule(ns, name string, m *member, intent labels.Selector) string {
	if n := r.byNS[ns]; n != nil {
		if n.Members != nil && !n.Members.Matches(m.name, m.labels) {
			return fmt.Sprintf("spec.reach.namespaces[%s].members", ns)
		}
		for _, s := range n.Services {
			if s.Name == name && !s.Importers.Matches(m.name, m.labels) {
				return fmt.Sprintf("spec.reach.namespaces[%s].services[%s].importers", ns, name)
			}
		}
	}
	if intent != nil && !intent.Matches(memberLabels(m)) {
		return "the export's " + ImportersAnnotation + " annotation"
	}
	return ""
}

// judge records on e why the policy refuses it, if it does, and its
// importers intent.
func (r reach) judge(ns string, e *export) {
	if e.outside.reason, e.outside.msg = r.exportProblem(ns, e.m); e.outside.reason != "" {
		return
	}
	intent, err := importersIntent(e.se)
	if err != nil {
		e.outside.reason, e.outside.msg = ReasonInvalidImporters, fmt.Sprintf("member %s: %v", e.m.name, err)
		return
	}
	e.intent = intent
}

// memberLabels are m's labels as reach selectors see them: its own, and
// its name under MemberNameLabel, which no label of its own can change.
func memberLabels(m *member) labels.Set {
	out := labels.Set{}
	for k, v := range m.labels {
		out[k] = v
	}
	out[MemberNameLabel] = m.name
	return out
}

// importersIntent is the selector an export's annotation gives (nil: no
// annotation), or why it is not one.
func importersIntent(se *mcsv1alpha1.ServiceExport) (labels.Selector, error) {
	v, ok := se.Annotations[ImportersAnnotation]
	if !ok {
		return nil, nil
	}
	sel, err := labels.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("annotation %s=%q is not a label selector: %w", ImportersAnnotation, v, err)
	}
	return sel, nil
}

// reachNote names, in an export's Ready condition, the members that import
// the service and those the reach policy keeps out, when it keeps any:
// what KEP-1645's amendment puts in ServiceExport.status.clusters, while
// mcs-api has no such field.
func reachNote(conds []Condition, rep ServiceReport) []Condition {
	if len(rep.OutOfReach) == 0 {
		return conds
	}
	out := make([]string, len(rep.OutOfReach))
	for i, o := range rep.OutOfReach {
		out[i] = o.Member + " (" + o.Rule + ")"
	}
	conds = slices.Clone(conds)
	for i, c := range conds {
		if c.Type == "Ready" {
			conds[i].Message += fmt.Sprintf("; imported by: %s; out of reach: %s", orNone(rep.ImportedBy), strings.Join(out, ", "))
		}
	}
	return conds
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// outOfReachPolicy is the report of a traffic policy in a member the reach
// policy keeps from importing its service: refused, naming the rule, so
// its status says why it steers nothing.
func outOfReachPolicy(m *member, pol *v1alpha1.GlobalTrafficPolicy, rule string) PolicyReport {
	msg := fmt.Sprintf("member %s may not import %s/%s (%s): the policy has nothing to steer", m.name, pol.Namespace, pol.Name, rule)
	return PolicyReport{Member: m.name, LbType: string(lbTypeOf(pol)), Conditions: []Condition{
		{Type: "Accepted", Status: "False", Reason: ReasonOutOfReach, Message: msg},
		{Type: "Applied", Status: "False", Reason: ReasonOutOfReach, Message: "not applied: " + msg},
	}}
}
