// SPDX-License-Identifier: Apache-2.0

package render

import "fmt"

// ProblemKind says what is not healthy about a service.
type ProblemKind string

// What counts as a problem, for status/SUMMARY.md, `validate` and the
// metrics alike.
const (
	// ProblemInvalid: an export's Valid condition is not True.
	ProblemInvalid ProblemKind = "Invalid"
	// ProblemConflict: a valid export has Conflict=True.
	ProblemConflict ProblemKind = "Conflict"
	// ProblemNotReady: a valid export's Ready condition is not True.
	ProblemNotReady ProblemKind = "NotReady"
	// ProblemMissingNamespace: a member lacks the service's namespace and
	// does not import it.
	ProblemMissingNamespace ProblemKind = "MissingNamespace"
	// ProblemWarning: one of the service's warnings, or a snapshot file's
	// (snapshot.Snapshot.Warnings), which validate adds; never the
	// report's, which must not depend on the clock those read.
	ProblemWarning ProblemKind = "Warning"
	// ProblemPolicy: a GlobalTrafficPolicy whose Applied condition is not
	// True (an invalid one is never applied either).
	ProblemPolicy ProblemKind = "Policy"
)

// ProblemKinds are every ProblemKind, in the order Problems lists them.
var ProblemKinds = []ProblemKind{ProblemInvalid, ProblemConflict, ProblemNotReady, ProblemMissingNamespace, ProblemWarning, ProblemPolicy}

// Problem is one thing not healthy about one service, or a warning about
// one snapshot file, which has no Namespace and Name.
type Problem struct {
	Kind            ProblemKind
	Namespace, Name string
	// Member is the exporting member (export kinds), the member without the
	// namespace, the policy's consuming member, or the member whose
	// snapshot file a warning is about; empty for a service's warning.
	Member string
	// Reason and Message are the condition's, or the warning for
	// ProblemWarning.
	Reason, Message string
	// LbType is the policy's, for ProblemPolicy.
	LbType string
}

// String is the problem as one line of SUMMARY.md and `validate`.
func (p Problem) String() string {
	switch p.Kind {
	case ProblemMissingNamespace:
		return fmt.Sprintf("%s/%s: namespace %s does not exist in %s", p.Namespace, p.Name, p.Namespace, p.Member)
	case ProblemWarning:
		if p.Name == "" {
			// A snapshot file's: the message names file, member and object.
			return p.Message
		}
		return fmt.Sprintf("%s/%s: %s", p.Namespace, p.Name, p.Message)
	case ProblemPolicy:
		return fmt.Sprintf("%s/%s: %s policy in %s: %s: %s", p.Namespace, p.Name, p.LbType, p.Member, p.Reason, p.Message)
	default:
		return fmt.Sprintf("%s/%s from %s: %s: %s", p.Namespace, p.Name, p.Member, p.Reason, p.Message)
	}
}

// Problems lists what is not healthy about the service, in a fixed order:
// per export in precedence order (invalid, or else conflict and not
// ready), then members without the namespace, warnings, and policies.
func (s *ServiceReport) Problems() []Problem {
	var out []Problem
	add := func(k ProblemKind, member string, c Condition) {
		out = append(out, Problem{Kind: k, Namespace: s.Namespace, Name: s.Name, Member: member, Reason: c.Reason, Message: c.Message})
	}
	for _, e := range s.Exports {
		if c, ok := e.Condition("Valid"); ok && c.Status != "True" {
			add(ProblemInvalid, e.Member, c)
			continue
		}
		if c, ok := e.Condition("Conflict"); ok && c.Status == "True" {
			add(ProblemConflict, e.Member, c)
		}
		if c, ok := e.Condition("Ready"); ok && c.Status != "True" {
			add(ProblemNotReady, e.Member, c)
		}
	}
	for _, m := range s.MissingNamespace {
		add(ProblemMissingNamespace, m, Condition{})
	}
	for _, w := range s.Warnings {
		add(ProblemWarning, "", Condition{Message: w})
	}
	for _, p := range s.Policies {
		if c, _ := p.Condition("Applied"); c.Status != "True" {
			add(ProblemPolicy, p.Member, c)
			out[len(out)-1].LbType = p.LbType
		}
	}
	return out
}

// Problems lists the problems of every service, in service order.
func (r *Report) Problems() []Problem {
	var out []Problem
	for i := range r.Services {
		out = append(out, r.Services[i].Problems()...)
	}
	return out
}

// Conflicted reports whether any export of the service has Conflict=True.
func (s ServiceReport) Conflicted() bool {
	for _, p := range s.Problems() {
		if p.Kind == ProblemConflict {
			return true
		}
	}
	return false
}
