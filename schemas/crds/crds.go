// SPDX-License-Identifier: Apache-2.0

// Package crds gives the CustomResourceDefinitions mcs-gitops installs into a
// cluster: the upstream Multi-Cluster Services API CRDs, embedded from the
// sigs.k8s.io/mcs-api module itself; the Gateway API CRDs gateway mode needs
// (gatewayapi/), copied from the sigs.k8s.io/gateway-api module by `go
// generate` (that module embeds none) and checked byte for byte against it
// in a test; and the project's own GlobalTrafficPolicy CRD (mcsgitops/).
// The upstream ones are never edited by hand: a module bump is the only way
// they change. The project's own is written by hand next to its Go type in
// schemas/v1alpha1, and a test checks that the two name the same fields.
//
// It owns decoding those manifests; it does not talk to any cluster.
package crds

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	mcscrd "sigs.k8s.io/mcs-api/config/crd"
)

// MCS returns the ServiceExport and ServiceImport CRDs of sigs.k8s.io/mcs-api.
// Both v1alpha1 and v1beta1 are served; CoreDNS's multicluster plugin reads
// ServiceImports through v1alpha1, so neither version may be dropped.
func MCS() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return decode(
		embedded{"serviceexports.multicluster.x-k8s.io", mcscrd.ServiceExportCRD},
		embedded{"serviceimports.multicluster.x-k8s.io", mcscrd.ServiceImportCRD},
	)
}

type embedded struct {
	name     string
	manifest []byte
}

func decode(manifests ...embedded) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(manifests))
	for _, m := range manifests {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(m.manifest, crd); err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", m.name, err)
		}
		if crd.Name != m.name {
			return nil, fmt.Errorf("embedded CRD %s: manifest is named %q", m.name, crd.Name)
		}
		out = append(out, crd)
	}
	return out, nil
}
