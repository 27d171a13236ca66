// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

const gatewayGroup = "gateway.networking.k8s.io"

// The kinds the renderer emits, by group and kind (any served version).
var (
	ServiceImportKind = schema.GroupKind{Group: mcsv1alpha1.GroupName, Kind: "ServiceImport"}
	ServiceKind       = schema.GroupKind{Kind: "Service"}
	EndpointSliceKind = schema.GroupKind{Group: discoveryv1.GroupName, Kind: "EndpointSlice"}
	HTTPRouteKind     = schema.GroupKind{Group: gatewayGroup, Kind: "HTTPRoute"}
	TCPRouteKind      = schema.GroupKind{Group: gatewayGroup, Kind: "TCPRoute"}
	// One per exported service with TCP ports: its listeners on the
	// member's Gateway, without editing the user's Gateway itself.
	ListenerSetKind = schema.GroupKind{Group: gatewayGroup, Kind: "ListenerSet"}
	// Where the implementation has no ListenerSet (tcpListeners: Gateway),
	// those listeners merged into the member's own Gateway; the shape
	// check refuses any other Gateway or shape, and apply never creates,
	// labels or prunes it.
	GatewayKind = schema.GroupKind{Group: gatewayGroup, Kind: "Gateway"}
	// Created only with createMissingNamespaces, never pruned.
	NamespaceKind = schema.GroupKind{Kind: "Namespace"}
)

// allowed are the kinds a member directory may hold. Everything else is
// refused before anything is applied: a commit cannot create a ClusterRole
// just because someone put one under clusters/<member>/.
var allowed = []schema.GroupKind{
	ServiceImportKind, ServiceKind, EndpointSliceKind, HTTPRouteKind, TCPRouteKind, ListenerSetKind, GatewayKind, NamespaceKind,
}

// Prunable are the allowed kinds whose objects mcs-gitops owns and may
// delete: all but Namespace and Gateway, which are the user's. Sorted.
func Prunable() []schema.GroupKind {
	var out []schema.GroupKind
	for _, gk := range allowed {
		if gk != NamespaceKind && gk != GatewayKind {
			out = append(out, gk)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// CheckKind says why an object of this apiVersion and kind, in namespace
// ("" for none), may not be in a member directory, or returns nil. It is
// the first check, before the object's shape (Check).
func CheckKind(apiVersion, kind, namespace string) error {
	if apiVersion == "" || kind == "" {
		return errors.New("object has no apiVersion or kind")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: kind}
	if !slices.Contains(allowed, gk) {
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = a.Kind
		}
		return fmt.Errorf("kind %s (%s) is not in the allow-list (%s)", kind, apiVersion, strings.Join(names, ", "))
	}
	if gk == NamespaceKind {
		if namespace != "" {
			return fmt.Errorf("Namespace with metadata.namespace %q", namespace)
		}
	} else if namespace == "" {
		return fmt.Errorf("%s without metadata.namespace", kind)
	}
	return nil
}
