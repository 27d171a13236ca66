// SPDX-License-Identifier: Apache-2.0

package crds

import (
	_ "embed"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

//go:embed mcsgitops/mcs-gitops.io_globaltrafficpolicies.yaml
var globalTrafficPolicyCRD []byte

// GlobalTrafficPolicy returns the CRD of the project's own
// GlobalTrafficPolicy (mcs-gitops.io/v1alpha1, namespaced, status
// subresource). Every member that uses traffic policies needs it installed;
// mcs-gitops reads the policies there and writes their status.
func GlobalTrafficPolicy() (*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := decode(embedded{"globaltrafficpolicies.mcs-gitops.io", globalTrafficPolicyCRD})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

//go:embed inventory/multicluster.x-k8s.io_clusterprofiles.yaml
var clusterProfileCRD []byte

// ClusterProfile returns a CRD of SIG Multicluster's ClusterProfile
// (multicluster.x-k8s.io/v1alpha1, cluster-inventory-api v0.1.2) with the
// fields mcs-gitops reads, for a management cluster that no cluster
// manager has installed the upstream one in (member join
// --cluster-profile) and for tests.
func ClusterProfile() (*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := decode(embedded{"clusterprofiles.multicluster.x-k8s.io", clusterProfileCRD})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}
