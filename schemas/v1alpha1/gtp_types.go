// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GlobalTrafficPolicyKind is the kind of the traffic policy CRD; its plural
// resource is GlobalTrafficPolicyResource.
const (
	GlobalTrafficPolicyKind     = "GlobalTrafficPolicy"
	GlobalTrafficPolicyResource = "globaltrafficpolicies"
)

// SchemeGroupVersion is the group and version of the project's CRDs.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// LoadBalancerType says which exporting members a consuming member's
// derived Service sends traffic to.
type LoadBalancerType string

const (
	// Locality: only the consuming member's own endpoints; with one
	// target, only that target's (FSM pins the service to it).
	Locality LoadBalancerType = "Locality"
	// FailOver: the consuming member's own endpoints while any of them is
	// ready, else the first target (in listed order) with a ready endpoint.
	FailOver LoadBalancerType = "FailOver"
	// ActiveActive: the consuming member's own endpoints plus the targets'
	// (every exporting member when there are no targets), weighted where
	// the member's data plane can express weights.
	ActiveActive LoadBalancerType = "ActiveActive"
)

// GlobalTrafficPolicy chooses, for one consuming member, which exporting
// members its derived Service for the Service of the same namespace/name
// reaches. It lives in the consuming member and is read like its exports.
type GlobalTrafficPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GlobalTrafficPolicySpec   `json:"spec"`
	Status GlobalTrafficPolicyStatus `json:"status,omitempty"`
}

// GlobalTrafficPolicySpec is what the user asks for.
type GlobalTrafficPolicySpec struct {
	// LbType is Locality, FailOver or ActiveActive; empty means Locality,
	// the CRD's default, as in FSM.
	LbType LoadBalancerType `json:"lbType,omitempty"`
	// Targets are exporting members by cluster key region/zone/group/name.
	// Locality allows at most one, FailOver needs at least one.
	Targets []TrafficTarget `json:"targets,omitempty"`
}

// TrafficTarget is one exporting member a policy names.
type TrafficTarget struct {
	// ClusterKey is region/zone/group/name of a member of the ClusterSet.
	ClusterKey string `json:"clusterKey"`
	// Weight is the target's share under ActiveActive, relative to the
	// other targets and this member's own endpoints; unset weighs 100,
	// FSM's accept-all. Must not be negative; 0 sends nothing.
	Weight *int32 `json:"weight,omitempty"`
}

// GlobalTrafficPolicyStatus says what was applied. Written by mcs-gitops.
type GlobalTrafficPolicyStatus struct {
	// Conditions: Accepted (the policy is valid), Applied (what the
	// derived Service gets follows it; False with a reason when part of it,
	// e.g. weights, cannot be expressed).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Clusters are the cluster IDs whose endpoints the derived Service gets,
	// in priority order for FailOver.
	Clusters []string `json:"clusters,omitempty"`
	// Weights per cluster ID, when a weighted route was rendered.
	Weights map[string]int32 `json:"weights,omitempty"`
}

// GlobalTrafficPolicyList is a list of GlobalTrafficPolicies.
type GlobalTrafficPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GlobalTrafficPolicy `json:"items"`
}

// AddToScheme registers the project's CRD types.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &GlobalTrafficPolicy{}, &GlobalTrafficPolicyList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

// DeepCopyInto copies p into out.
func (p *GlobalTrafficPolicy) DeepCopyInto(out *GlobalTrafficPolicy) {
	*out = *p
	out.TypeMeta = p.TypeMeta
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if p.Spec.Targets != nil {
		out.Spec.Targets = make([]TrafficTarget, len(p.Spec.Targets))
		for i, t := range p.Spec.Targets {
			out.Spec.Targets[i] = t
			if t.Weight != nil {
				w := *t.Weight
				out.Spec.Targets[i].Weight = &w
			}
		}
	}
	if p.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(p.Status.Conditions))
		for i := range p.Status.Conditions {
			p.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	if p.Status.Clusters != nil {
		out.Status.Clusters = append([]string(nil), p.Status.Clusters...)
	}
	if p.Status.Weights != nil {
		out.Status.Weights = make(map[string]int32, len(p.Status.Weights))
		for k, v := range p.Status.Weights {
			out.Status.Weights[k] = v
		}
	}
}

// DeepCopy returns a copy of p.
func (p *GlobalTrafficPolicy) DeepCopy() *GlobalTrafficPolicy {
	if p == nil {
		return nil
	}
	out := new(GlobalTrafficPolicy)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *GlobalTrafficPolicy) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *GlobalTrafficPolicyList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &GlobalTrafficPolicyList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]GlobalTrafficPolicy, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
