// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import "fmt"

// Validate checks a policy the way an admission webhook would: a known
// lbType, Locality with at most one target, FailOver with at least one,
// no negative weight, no target listed twice. The CRD's own validation
// rules say the same, so a policy the apiserver accepted passes; this
// catches snapshots written by hand.
func (p *GlobalTrafficPolicy) Validate() []string {
	var errs []string
	switch p.Spec.LbType {
	case Locality, "":
		// No lbType is Locality, FSM's default.
		if len(p.Spec.Targets) > 1 {
			errs = append(errs, fmt.Sprintf("lbType Locality allows at most one target, got %d", len(p.Spec.Targets)))
		}
	case FailOver:
		if len(p.Spec.Targets) == 0 {
			errs = append(errs, "lbType FailOver needs at least one target to fail over to")
		}
	case ActiveActive:
	default:
		errs = append(errs, fmt.Sprintf("lbType %q is not one of %s, %s, %s", p.Spec.LbType, Locality, FailOver, ActiveActive))
	}
	seen := map[string]bool{}
	for i, t := range p.Spec.Targets {
		if t.ClusterKey == "" {
			errs = append(errs, fmt.Sprintf("targets[%d].clusterKey is required", i))
		} else if seen[t.ClusterKey] {
			errs = append(errs, fmt.Sprintf("targets[%d]: cluster key %q is listed twice", i, t.ClusterKey))
		}
		seen[t.ClusterKey] = true
		if t.Weight != nil && *t.Weight < 0 {
			errs = append(errs, fmt.Sprintf("targets[%d].weight %d is negative", i, *t.Weight))
		}
	}
	return errs
}
