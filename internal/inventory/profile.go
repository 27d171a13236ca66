// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

// The ClusterProfile API as of sigs.k8s.io/cluster-inventory-api v0.1.2:
// only the fields mcs-gitops reads. The module is not a dependency; these
// are the API's facts, written down again (see docs/inventory.md).
const (
	Group   = "multicluster.x-k8s.io"
	Version = "v1alpha1"
	Kind    = "ClusterProfile"
	// Resource is the CRD's plural.
	Resource = "clusterprofiles"

	// LabelClusterManager is set by a cluster manager on its profiles, to
	// the value of spec.clusterManager.name.
	LabelClusterManager = "x-k8s.io/cluster-manager"
	// LabelClusterSet names the ClusterSet a profile (OCM) or its
	// namespace (the API's documentation) belongs to.
	LabelClusterSet = "multicluster.x-k8s.io/clusterset"

	// ConditionControlPlaneHealthy is the condition a cluster manager
	// sets from the cluster's apiserver health.
	ConditionControlPlaneHealthy = "ControlPlaneHealthy"
	// PropertyClusterID is the KEP-2149 cluster ID property.
	PropertyClusterID = "cluster.clusterset.k8s.io"
	// PropertyClusterSet is the KEP-2149 ClusterSet property.
	PropertyClusterSet = "clusterset.k8s.io"
	// PropertyRegion and PropertyZone are the well-known topology
	// properties cluster managers (GKE Fleet, Open Cluster Management)
	// set; they become the member's region and zone.
	PropertyRegion = "topology.kubernetes.io/region"
	PropertyZone   = "topology.kubernetes.io/zone"
)

// GroupVersionKind is ClusterProfile's.
var GroupVersionKind = schema.GroupVersionKind{Group: Group, Version: Version, Kind: Kind}

// GroupVersionResource is ClusterProfile's.
var GroupVersionResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: Resource}

// Profile is one ClusterProfile, the fields mcs-gitops reads.
type Profile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ProfileSpec   `json:"spec"`
	Status            ProfileStatus `json:"status,omitempty"`
}

// ProfileSpec is what the cluster manager declared.
type ProfileSpec struct {
	DisplayName    string         `json:"displayName,omitempty"`
	ClusterManager ClusterManager `json:"clusterManager"`
}

// ClusterManager names the manager that owns the profile.
type ClusterManager struct {
	Name string `json:"name"`
}

// ProfileStatus is what the cluster manager observed.
type ProfileStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	Version    struct {
		Kubernetes string `json:"kubernetes,omitempty"`
	} `json:"version,omitempty"`
	Properties      []Property       `json:"properties,omitempty"`
	AccessProviders []AccessProvider `json:"accessProviders,omitempty"`
	// CredentialProviders is the deprecated name of AccessProviders; an
	// access provider of the same name wins.
	CredentialProviders []AccessProvider `json:"credentialProviders,omitempty"`
}

// Property is one name/value the cluster manager reports (KEP-2149
// properties among them).
type Property struct {
	Name             string       `json:"name"`
	Value            string       `json:"value"`
	LastObservedTime *metav1.Time `json:"lastObservedTime,omitempty"`
}

// AccessProvider says how one kind of credential reaches the cluster: the
// name the consumer's provider file maps to an exec plugin, and the
// cluster's address, CA and extensions, as in a kubeconfig.
type AccessProvider struct {
	Name    string              `json:"name"`
	Cluster clientcmdv1.Cluster `json:"cluster"`
}

// Providers are the profile's access providers: accessProviders, then
// the deprecated credentialProviders whose names it does not list.
func (p *Profile) Providers() []AccessProvider {
	out := append([]AccessProvider(nil), p.Status.AccessProviders...)
	seen := map[string]bool{}
	for _, a := range out {
		seen[a.Name] = true
	}
	for _, a := range p.Status.CredentialProviders {
		if !seen[a.Name] {
			out = append(out, a)
		}
	}
	return out
}

// Property returns the value of the property called name.
func (p *Profile) Property(name string) (string, bool) {
	for _, pr := range p.Status.Properties {
		if pr.Name == name {
			return pr.Value, true
		}
	}
	return "", false
}

// Ref is namespace/name, how errors and the committed record name it.
func (p *Profile) Ref() string { return p.Namespace + "/" + p.Name }

// FromUnstructured reads a profile listed as an unstructured object.
func FromUnstructured(u *unstructured.Unstructured) (*Profile, error) {
	p := &Profile{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
		return nil, fmt.Errorf("ClusterProfile %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return p, nil
}
