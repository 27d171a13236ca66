package snapshot

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
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
	ClusterID  string
	Namespaces []corev1.Namespace
	// ServiceExports are stored as v1alpha1; v1beta1 has the same schema.
	ServiceExports []mcsv1alpha1.ServiceExport
	Services       []corev1.Service
	EndpointSlices []discoveryv1.EndpointSlice
}
