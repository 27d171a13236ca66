// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// ReachPolicy is the platform's word on who may reach what: which
// namespaces may be exported at all, which members share a namespace's
// identity (KEP-1645 namespace sameness, which by default holds across the
// whole ClusterSet), and which of those may import a given service.
// Enforced in render: a member outside a service's reach gets no
// ServiceImport, no derived Service, no slices and no DNS name.
type ReachPolicy struct {
	// Namespaces narrows namespaces by name; a namespace not listed
	// follows Unlisted.
	Namespaces []NamespaceReach `json:"namespaces,omitempty"`
	// Unlisted is what a namespace not in Namespaces gets: "shared" (every
	// member exports and imports it, KEP-1645's default) or "none" (it is
	// not exported at all: its exports are Valid=False).
	Unlisted ReachUnlisted `json:"unlisted,omitempty" schema:"enum=shared|none;default=shared"`
}

// ReachUnlisted is what a namespace the reach policy does not list gets.
type ReachUnlisted string

const (
	// ReachShared: every member shares the namespace.
	ReachShared ReachUnlisted = "shared"
	// ReachNone: the namespace is not exported.
	ReachNone ReachUnlisted = "none"
)

// NamespaceReach is the reach of one namespace.
type NamespaceReach struct {
	// Name of the namespace.
	Name string `json:"name" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Members share this namespace's identity: only they may export its
	// services and import them, even where a member outside has a
	// namespace of the same name. Unset: every member.
	Members *MemberSelector `json:"members,omitempty"`
	// Services narrow, per service, which of those members may import it.
	Services []ServiceReach `json:"services,omitempty"`
}

// ServiceReach narrows which members may import one service.
type ServiceReach struct {
	// Name of the service (its ServiceExport's name).
	Name string `json:"name" schema:"pattern=^[a-z]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Importers are the members that may import it, among those the
	// namespace is shared with.
	Importers MemberSelector `json:"importers"`
}

// MemberSelector picks members by name, by label, or both (a member must
// then match both). An empty selector picks every member.
type MemberSelector struct {
	// Names of members.
	Names []string `json:"names,omitempty"`
	// MatchLabels are labels (spec.members[].labels) a member must all have.
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// Matches says whether the member named name with labels is picked.
func (s MemberSelector) Matches(name string, labels map[string]string) bool {
	if len(s.Names) > 0 {
		found := false
		for _, n := range s.Names {
			found = found || n == name
		}
		if !found {
			return false
		}
	}
	for k, v := range s.MatchLabels {
		if have, ok := labels[k]; !ok || have != v {
			return false
		}
	}
	return true
}
