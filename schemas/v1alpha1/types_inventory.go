// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// InventorySource takes members from the cluster inventory: the
// ClusterProfiles (multicluster.x-k8s.io/v1alpha1, SIG Multicluster's
// KEP-4322) in one namespace of the management cluster. Each profile
// becomes a flat member named after it; a hand-written member of the same
// name wins. The members in force are committed in status/inventory.yaml,
// so a member joining or leaving the inventory is a commit. See
// docs/inventory.md.
type InventorySource struct {
	// Namespace of the ClusterProfiles in the management cluster (an
	// inventory is namespace-scoped).
	Namespace string `json:"namespace" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// MatchLabels are labels a profile must all have to be a member, such
	// as x-k8s.io/cluster-manager or multicluster.x-k8s.io/clusterset.
	// Unset: every profile in the namespace.
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// ProviderFile is the access provider file (KEP-5339's format, JSON):
	// which client-go exec plugin gets a credential for each access
	// provider a profile names. Mount it from a ConfigMap; a relative path
	// resolves against the directory of clusterset.yaml. It holds commands,
	// never credentials.
	ProviderFile string `json:"providerFile" schema:"maxLength=4096"`
	// Group is the cluster-key group of the inventory's members. Defaults
	// to "default".
	Group string `json:"group,omitempty" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63;default=default"`
}

// ClusterProfileRef names a ClusterProfile in the management cluster
// whose access providers give the member's credentials.
type ClusterProfileRef struct {
	// Namespace of the profile.
	Namespace string `json:"namespace" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Name of the profile.
	Name string `json:"name" schema:"maxLength=253"`
}

// WithMembers is a copy of the ClusterSet with extra members after its
// own (the members the inventory gives), checked again as one config:
// the errors name the members by name, since they come from no file.
func (c *ClusterSet) WithMembers(extra []Member) (*ClusterSet, error) {
	out := *c
	out.Spec.Members = append(append([]Member(nil), c.Spec.Members...), extra...)
	out.Default()
	if errs := out.validate(); len(errs) > 0 {
		return nil, errs
	}
	return &out, nil
}
