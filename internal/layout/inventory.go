// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// InventoryRecord is status/inventory.yaml: the members the cluster
// inventory (spec.inventory) gave when the commit was made. It is the
// membership in force, so a commit renders to itself offline without the
// management cluster (InventoryRecord.Config), and a member joining or
// leaving the inventory is a diff a person reads.
type InventoryRecord struct {
	// Namespace and MatchLabels are where the profiles were listed.
	Namespace   string            `json:"namespace"`
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// Members are the inventory's members, by name.
	Members []InventoryMember `json:"members"`
	// Refused are the profiles that could not be members, and why.
	Refused []InventoryRefusal `json:"refused,omitempty"`
	// Held is set while the inventory lists no profile at all but the
	// last commit had members: the members stand as committed, like
	// members that could not be read.
	Held string `json:"held,omitempty"`
}

// InventoryMember is one member from a ClusterProfile.
type InventoryMember struct {
	Name string `json:"name"`
	// Profile is the ClusterProfile, namespace/name.
	Profile string `json:"profile"`
	// ClusterManager is the profile's spec.clusterManager.name.
	ClusterManager string `json:"clusterManager,omitempty"`
	// ClusterID is the profile's cluster.clusterset.k8s.io property, when
	// it has one.
	ClusterID string `json:"clusterID,omitempty"`
	// Labels are the profile's labels, which spec.reach and spec.rollout
	// select by.
	Labels map[string]string `json:"labels,omitempty"`
	// Region and Zone are the profile's topology.kubernetes.io/region
	// and zone properties, part of the member's cluster key.
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
}

// InventoryRefusal is a profile that is not a member.
type InventoryRefusal struct {
	Profile string `json:"profile"`
	Reason  string `json:"reason"`
}

const inventoryHeader = "# Written by mcs-gitops: the members the cluster inventory (ClusterProfiles,\n" +
	"# spec.inventory) gives. A member joining or leaving the inventory changes this file.\n"

// FormatInventory renders status/inventory.yaml, members and refusals
// sorted. Same record, same bytes.
func FormatInventory(r *InventoryRecord) ([]byte, error) {
	c := *r
	c.Members = slices.Clone(r.Members)
	if c.Members == nil {
		c.Members = []InventoryMember{}
	}
	slices.SortFunc(c.Members, func(a, b InventoryMember) int { return strings.Compare(a.Name, b.Name) })
	c.Refused = slices.Clone(r.Refused)
	slices.SortFunc(c.Refused, func(a, b InventoryRefusal) int { return strings.Compare(a.Profile, b.Profile) })
	b, err := yaml.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", InventoryFile, err)
	}
	return append([]byte(inventoryHeader), b...), nil
}

// ParseInventory reads status/inventory.yaml back; empty data (no
// inventory) gives nil.
func ParseInventory(data []byte) (*InventoryRecord, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var r InventoryRecord
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", InventoryFile, err)
	}
	seen := map[string]bool{}
	for i, m := range r.Members {
		if m.Name == "" || m.Profile == "" {
			return nil, fmt.Errorf("%s: members[%d]: name and profile are required", InventoryFile, i)
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("%s: member %q appears twice", InventoryFile, m.Name)
		}
		seen[m.Name] = true
	}
	return &r, nil
}

// MemberConfigs are the record's members as clusterset.yaml members:
// flat, in group, credentials through their ClusterProfile.
func (r *InventoryRecord) MemberConfigs(group string) []v1alpha1.Member {
	if r == nil {
		return nil
	}
	out := make([]v1alpha1.Member, 0, len(r.Members))
	for _, m := range r.Members {
		ns, name, _ := strings.Cut(m.Profile, "/")
		out = append(out, v1alpha1.Member{
			Name: m.Name, ClusterID: m.ClusterID, Region: m.Region, Zone: m.Zone, Group: group, Mode: v1alpha1.ModeFlat, Labels: m.Labels,
			Kubeconfig: v1alpha1.KubeconfigRef{ClusterProfile: &v1alpha1.ClusterProfileRef{Namespace: ns, Name: name}},
		})
	}
	return out
}

// WithInventory is the config in force: cfg with the record's members
// after its own. Without spec.inventory it is cfg; with it and no record
// (nothing committed yet), cfg's own members only. name names the record
// in errors.
func WithInventory(cfg *v1alpha1.ClusterSet, r *InventoryRecord, name string) (*v1alpha1.ClusterSet, error) {
	if cfg.Spec.Inventory == nil || r == nil || len(r.Members) == 0 {
		return cfg, nil
	}
	out, err := cfg.WithMembers(r.MemberConfigs(cfg.Spec.Inventory.Group))
	if err != nil {
		return nil, fmt.Errorf("%s: the members it records do not make a valid ClusterSet with the config's: %w", name, err)
	}
	return out, nil
}
