// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// ClusterIDProperty is the KEP-2149 ClusterProperty whose value is the
// member's cluster ID.
const ClusterIDProperty = "cluster.clusterset.k8s.io"

// Snapshot is what the renderer needs to know about one member. Slices are
// sorted by namespace and name once loaded.
type Snapshot struct {
	// Member is the member's name in clusterset.yaml.
	Member string
	// ClusterID is the value of the member's cluster.clusterset.k8s.io
	// ClusterProperty, empty when it has none.
	ClusterID string
	// ClusterIDAt is where ClusterID was read, "file:line", so that a
	// render-time error about it (an invalid or duplicate ID) can point
	// there. Not part of the formatted snapshot.
	ClusterIDAt string
	Namespaces  []corev1.Namespace
	// ServiceExports are stored as v1alpha1; v1beta1 has the same schema.
	ServiceExports []mcsv1alpha1.ServiceExport
	Services       []corev1.Service
	EndpointSlices []discoveryv1.EndpointSlice
	// GlobalTrafficPolicies of the member, status left out.
	GlobalTrafficPolicies []v1alpha1.GlobalTrafficPolicy
	// GatewayAddresses are what the member's gateway host resolved to when
	// it was read, sorted; empty when the host is an IP address (the
	// config says it) or there is no gateway. Stored in the snapshot file
	// as the ClusterProperty GatewayAddressesProperty, comma-separated.
	GatewayAddresses []string
	// Rejected are live objects left out because they do not load, sorted
	// by namespace, name and kind.
	Rejected []Rejected
	// ServiceCIDRs are the member's Service IP ranges (networking.k8s.io/v1),
	// name and spec.cidrs only; they say which IP families it can serve
	// (IPFamilies). Empty when unknown.
	ServiceCIDRs []networkingv1.ServiceCIDR
	// Warnings are what ParseStrict found in the file that loads but is
	// most likely a mistake, in file order, each naming file:line, member
	// and object; nil from Parse (a live read). Not part of the formatted
	// snapshot, and the renderer does not read them.
	Warnings []string
	// Positions maps "Kind namespace/name" (Namespaces: "Namespace name")
	// to where ParseStrict read the object, file and line, so that CI can
	// point a reviewer at it (`-o github`); nil from Parse. Not part of the
	// formatted snapshot.
	Positions map[string]Position
}

// Position is a place in a file: the line an object's document starts on.
type Position struct {
	File string
	Line int
}

// ObjectRef names an object as Positions keys it.
func ObjectRef(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// GatewayAddressesProperty is the ClusterProperty name under which a
// snapshot file records the resolved gateway addresses. mcs-gitops writes
// it into the snapshot only; it is not read from or written to a cluster.
const GatewayAddressesProperty = "gateway-addresses.mcs-gitops.io"

// empty reports whether the snapshot holds nothing at all, which no real
// member's does (it has Namespaces).
func (s *Snapshot) empty() bool {
	return s.ClusterID == "" && len(s.Namespaces) == 0 && len(s.ServiceExports) == 0 && len(s.Services) == 0 &&
		len(s.EndpointSlices) == 0 && len(s.GlobalTrafficPolicies) == 0 && s.GatewayAddresses == nil &&
		len(s.Rejected) == 0 && len(s.ServiceCIDRs) == 0
}

// Clone is s with its own lists of exports, Services, EndpointSlices,
// traffic policies and rejected objects, so a caller may add to or take
// from them; the objects in them are shared and must not be modified.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.ServiceExports = slices.Clone(s.ServiceExports)
	c.Services = slices.Clone(s.Services)
	c.EndpointSlices = slices.Clone(s.EndpointSlices)
	c.GlobalTrafficPolicies = slices.Clone(s.GlobalTrafficPolicies)
	c.Rejected = slices.Clone(s.Rejected)
	return &c
}
