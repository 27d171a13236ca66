// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// appliedKinds are the kinds apply writes or reads through the
// controller-runtime client, one or more per API group version it uses.
var appliedKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "Namespace"},
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
	{Group: mcsv1alpha1.GroupName, Version: "v1alpha1", Kind: "ServiceImport"},
	{Group: mcsv1alpha1.GroupName, Version: "v1alpha1", Kind: "ServiceExport"},
	{Group: mcsv1alpha1.GroupName, Version: "v1beta1", Kind: "ServiceImport"},
	{Group: gatewayv1.GroupName, Version: "v1", Kind: "HTTPRoute"},
}

// warmMapper asks the member client's REST mapper for the kinds apply
// uses, so that the first apply after the loop starts does not wait for
// their discovery: controller-runtime's mapper discovers a group version
// on its first use, about 2.5 s of the first export's way to its imports
// under run. A kind the member does not serve (no Gateway API) is its
// apply's to report; nothing is reported here.
func (m *Member) warmMapper() {
	if m.Client == nil {
		return
	}
	mapper := m.Client.RESTMapper()
	for _, gvk := range appliedKinds {
		_, _ = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
}
