// SPDX-License-Identifier: Apache-2.0

package crds

import (
	"embed"
	"fmt"
	"path"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

//go:generate go run ./gen sigs.k8s.io/gateway-api config/crd/experimental gateway.networking.k8s.io_gatewayclasses.yaml gateway.networking.k8s.io_gateways.yaml gateway.networking.k8s.io_httproutes.yaml gateway.networking.k8s.io_listenersets.yaml gateway.networking.k8s.io_referencegrants.yaml gateway.networking.k8s.io_tcproutes.yaml gateway.networking.k8s.io_grpcroutes.yaml gateway.networking.k8s.io_backendtlspolicies.yaml gateway.networking.k8s.io_tlsroutes.yaml

// GatewayAPIModule is where the Gateway API CRDs come from; its version is
// the one in go.mod.
const GatewayAPIModule = "sigs.k8s.io/gateway-api"

// GatewayAPIChannelDir is the release channel copied: experimental, because
// TCPRoute (used for non-HTTP exports in gateway mode) is only there.
const GatewayAPIChannelDir = "config/crd/experimental"

// GatewayAPIFiles are the CRDs gateway mode needs: the Gateway routes
// attach to, its class, the two route kinds, ListenerSet (one per exported
// service with TCP ports adds their listeners to the member's Gateway
// without editing it), and ReferenceGrant.
var GatewayAPIFiles = []string{
	"gateway.networking.k8s.io_gatewayclasses.yaml",
	"gateway.networking.k8s.io_gateways.yaml",
	"gateway.networking.k8s.io_httproutes.yaml",
	"gateway.networking.k8s.io_listenersets.yaml",
	"gateway.networking.k8s.io_referencegrants.yaml",
	"gateway.networking.k8s.io_tcproutes.yaml",
}

// ImplementationFiles are CRDs gateway mode does not use but a Gateway API
// implementation may insist on watching before it serves anything
// (Traefik v3.6 lists GRPCRoutes, BackendTLSPolicies and, with its
// experimental channel on for TCPRoutes, TLSRoutes): the data-plane
// lab installs them beside GatewayAPIFiles where it runs one.
var ImplementationFiles = []string{
	"gateway.networking.k8s.io_grpcroutes.yaml",
	"gateway.networking.k8s.io_backendtlspolicies.yaml",
	"gateway.networking.k8s.io_tlsroutes.yaml",
}

//go:embed gatewayapi/*.yaml
var gatewayAPI embed.FS

// GatewayAPI returns the Gateway API CRDs listed in GatewayAPIFiles, as
// copied from the module by `go generate`.
func GatewayAPI() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return gatewayCRDs(GatewayAPIFiles)
}

// ForImplementations returns the CRDs listed in ImplementationFiles.
func ForImplementations() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return gatewayCRDs(ImplementationFiles)
}

func gatewayCRDs(files []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var ms []embedded
	for _, f := range files {
		data, err := gatewayAPI.ReadFile(path.Join("gatewayapi", f))
		if err != nil {
			return nil, fmt.Errorf("embedded Gateway API CRD %s: %w", f, err)
		}
		// File names are <group>_<plural>.yaml; the CRD is <plural>.<group>.
		group, plural := splitCRDFile(f)
		ms = append(ms, embedded{plural + "." + group, data})
	}
	return decode(ms...)
}

func splitCRDFile(f string) (group, plural string) {
	base := f[:len(f)-len(path.Ext(f))]
	for i := range base {
		if base[i] == '_' {
			return base[:i], base[i+1:]
		}
	}
	return base, base
}
