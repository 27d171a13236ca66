// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Reasons on a policy's Accepted and Applied conditions.
const (
	ReasonAccepted       = "Accepted"
	ReasonInvalidPolicy  = "Invalid"
	ReasonApplied        = "Applied"
	ReasonUnknownTargets = "UnknownTargets"
	// ReasonOutOfReach: the policy's member may not import the service,
	// or a target's export is outside the reach policy (spec.reach).
	ReasonOutOfReach            = "OutOfReach"
	ReasonWeightsNotExpressible = "WeightsNotExpressible"
)

// acceptAllWeight is what an ActiveActive target without a weight, and a
// member's own endpoints, weigh against explicit weights: FSM's
// ClusterWeightAcceptAll, so a policy ported from FSM splits traffic the
// same way.
const acceptAllWeight = 100

// choice is what one consuming member's derived Service gets.
type choice struct {
	// sources in priority order.
	sources []*export
	// weights by export, set when the policy asks for weights.
	weights map[*export]int32
	report  *PolicyReport
}

// lbTypeOf is the policy's load-balancing type. FSM's CRD defaults lbType
// to Locality; a policy applied without our CRD's default (an older CRD, a
// snapshot) means the same.
func lbTypeOf(pol *v1alpha1.GlobalTrafficPolicy) v1alpha1.LoadBalancerType {
	if pol.Spec.LbType == "" {
		return v1alpha1.Locality
	}
	return pol.Spec.LbType
}

// choose applies the consuming member's GlobalTrafficPolicy, if any, to
// the valid exports of a service. Without one every exporter contributes
// (the KEP-1645 default). Readiness is read from the snapshot, so FailOver
// follows the loop: it switches at the next render after the local
// endpoints stop (or start) being ready.
func choose(c *member, valid []*export, outside map[*member]string, byKey map[string]*member, pol *v1alpha1.GlobalTrafficPolicy) choice {
	if pol == nil {
		return choice{sources: valid}
	}
	lbType := lbTypeOf(pol)
	rep := &PolicyReport{Member: c.name, LbType: string(lbType)}
	// A refused policy is not applied: every exporting member is used.
	refuse := func(reason, msg string) choice {
		rep.Conditions = []Condition{
			{Type: "Accepted", Status: "False", Reason: reason, Message: msg},
			{Type: "Applied", Status: "False", Reason: reason, Message: "not applied, every exporting member is used: " + msg},
		}
		rep.Clusters = clusterIDs(valid)
		return choice{sources: valid, report: rep}
	}
	if errs := pol.Validate(); len(errs) > 0 {
		return refuse(ReasonInvalidPolicy, strings.Join(errs, "; "))
	}
	var refused []string
	for _, t := range pol.Spec.Targets {
		if m, ok := byKey[t.ClusterKey]; ok && outside[m] != "" {
			refused = append(refused, fmt.Sprintf("target %s: %s", t.ClusterKey, outside[m]))
		}
	}
	if len(refused) > 0 {
		return refuse(ReasonOutOfReach, strings.Join(refused, "; "))
	}
	exportOf := map[*member]*export{}
	for _, e := range valid {
		exportOf[e.m] = e
	}
	var unknown []string
	var targets []*export
	var weights []*int32
	for _, t := range pol.Spec.Targets {
		m, ok := byKey[t.ClusterKey]
		if !ok {
			unknown = append(unknown, t.ClusterKey)
			continue
		}
		// A target that does not export the service, or whose export is
		// invalid, contributes nothing; it is not an error.
		if e := exportOf[m]; e != nil {
			targets = append(targets, e)
			weights = append(weights, t.Weight)
		}
	}
	local := exportOf[c]
	ch := choice{report: rep}
	var how string
	switch lbType {
	case v1alpha1.Locality:
		switch {
		case len(pol.Spec.Targets) == 1:
			// FSM's Locality with a target pins the service to that one
			// cluster.
			ch.sources = targets
			how = "only the endpoints of the target " + pol.Spec.Targets[0].ClusterKey
		case local != nil:
			ch.sources = []*export{local}
			how = "only this member's own endpoints"
		default:
			how = "no endpoints: Locality keeps only this member's own, and it does not export the service"
		}
	case v1alpha1.FailOver:
		if local != nil && local.ready > 0 {
			ch.sources = []*export{local}
			how = "this member's own endpoints, which are ready"
			break
		}
		why := "no local endpoint is ready"
		if local == nil {
			why = "this member does not export the service"
		}
		// FSM gives the failover targets no order: without a ready local
		// endpoint every target with a ready endpoint takes traffic.
		var names []string
		for _, t := range targets {
			if t.ready > 0 {
				ch.sources = append(ch.sources, t)
				names = append(names, t.m.name)
			}
		}
		if len(names) > 0 {
			how = fmt.Sprintf("the endpoints of every target with a ready endpoint (%s), because %s", strings.Join(names, ", "), why)
		}
		if ch.sources == nil {
			ch.sources = targets
			how = fmt.Sprintf("the endpoints of every target, though none is ready, because %s", why)
		}
	case v1alpha1.ActiveActive:
		if local != nil {
			ch.sources = append(ch.sources, local)
		}
		if len(pol.Spec.Targets) == 0 {
			ch.sources = valid
			how = "every exporting member's endpoints"
			break
		}
		weighted := hasWeights(pol)
		if weighted {
			ch.weights = map[*export]int32{}
			if local != nil {
				// The member's own endpoints weigh like FSM's accept-all,
				// unless it lists itself.
				ch.weights[local] = acceptAllWeight
			}
		}
		for i, t := range targets {
			if t != local {
				ch.sources = append(ch.sources, t)
			}
			if weighted {
				ch.weights[t] = acceptAllWeight
				if weights[i] != nil {
					ch.weights[t] = *weights[i]
				}
			}
		}
		how = "this member's own endpoints and the targets'"
		if local == nil {
			how = "the targets' endpoints (this member does not export the service)"
		}
	}
	rep.Clusters = clusterIDs(ch.sources)
	rep.Conditions = []Condition{{Type: "Accepted", Status: "True", Reason: ReasonAccepted, Message: "the policy is valid"}}
	applied := Condition{Type: "Applied", Status: "True", Reason: ReasonApplied, Message: "the derived Service gets " + how}
	if len(unknown) > 0 {
		applied.Status, applied.Reason = "False", ReasonUnknownTargets
		what := "targets " + strings.Join(unknown, ", ") + " are not members of the ClusterSet and were"
		if len(unknown) == 1 {
			what = "target " + unknown[0] + " is not a member of the ClusterSet and was"
		}
		applied.Message = fmt.Sprintf("%s left out; the derived Service gets %s", what, how)
	}
	rep.Conditions = append(rep.Conditions, applied)
	return ch
}

// weightsNotApplied turns the Applied condition of a weighted policy
// False: the sources it chose stay, unweighted, for the reason why.
func (p *PolicyReport) weightsNotApplied(why string) {
	for i, c := range p.Conditions {
		if c.Type == "Applied" {
			p.Conditions[i] = Condition{Type: "Applied", Status: "False", Reason: ReasonWeightsNotExpressible,
				Message: "weights not applied: " + why + "; " + c.Message}
		}
	}
}

// hasWeights says whether an ActiveActive policy sets any weight; only
// then is a weighted route rendered.
func hasWeights(p *v1alpha1.GlobalTrafficPolicy) bool {
	if p.Spec.LbType != v1alpha1.ActiveActive {
		return false
	}
	for _, t := range p.Spec.Targets {
		if t.Weight != nil {
			return true
		}
	}
	return false
}

func clusterIDs(es []*export) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.m.clusterID)
	}
	return out
}
