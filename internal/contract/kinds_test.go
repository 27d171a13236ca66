// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCheckKind(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind, namespace string
		want                        string // substring of the error; "" for none
	}{
		{"multicluster.x-k8s.io/v1alpha1", "ServiceImport", "shop", ""},
		{"v1", "Service", "shop", ""},
		{"discovery.k8s.io/v1", "EndpointSlice", "shop", ""},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "shop", ""},
		{"gateway.networking.k8s.io/v1alpha2", "TCPRoute", "shop", ""},
		{"gateway.networking.k8s.io/v1", "ListenerSet", "shop", ""},
		{"gateway.networking.k8s.io/v1", "Gateway", "infra", ""},
		{"v1", "Namespace", "", ""},
		{"gateway.networking.k8s.io/v1", "GatewayClass", "", "not in the allow-list (ServiceImport, Service, EndpointSlice, HTTPRoute, TCPRoute, ListenerSet, Gateway, Namespace)"},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "", "not in the allow-list"},
		{"example.com/v1", "Service", "shop", "not in the allow-list"}, // a Service of another group
		{"v1", "Namespace", "shop", "Namespace with metadata.namespace"},
		{"v1", "Service", "", "Service without metadata.namespace"},
		{"", "Service", "shop", "no apiVersion or kind"},
		{"a/b/c", "Service", "shop", `apiVersion "a/b/c"`},
	} {
		err := CheckKind(tc.apiVersion, tc.kind, tc.namespace)
		if tc.want == "" {
			assert.NoError(t, err, "%s %s", tc.apiVersion, tc.kind)
		} else if assert.Error(t, err, "%s %s", tc.apiVersion, tc.kind) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
}

// Prune never looks at the user's Namespaces and Gateways; everything
// else the renderer emits it owns.
func TestPrunable(t *testing.T) {
	assert.Equal(t, []schema.GroupKind{
		EndpointSliceKind, HTTPRouteKind, ListenerSetKind, ServiceKind, ServiceImportKind, TCPRouteKind,
	}, Prunable())
}
