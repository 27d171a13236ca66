// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// Field managers and owner labels. Every object the applier writes carries
// the three owner labels; prune and the collision check read them, so an
// object without them is never touched.
const (
	// FieldManager owns what the rendered manifests say.
	FieldManager = "mcs-gitops"
	// IPsFieldManager owns ServiceImport spec.ips, which comes from the
	// derived Service's cluster IPs in the member, not from Git.
	IPsFieldManager = "mcs-gitops-ips"
	// StatusFieldManager owns what the applier writes through the status
	// subresource.
	StatusFieldManager = "mcs-gitops-status"

	LabelManagedBy  = render.ManagedByLabel
	ManagedByValue  = render.ManagedByValue
	LabelClusterSet = "mcs-gitops.io/clusterset"
	LabelMember     = "mcs-gitops.io/member"
)

// ownerLabels returns the labels that mark an object as applied by this
// tool for one member of one ClusterSet.
func (a *Applier) ownerLabels() map[string]string {
	return map[string]string{
		LabelManagedBy:  ManagedByValue,
		LabelClusterSet: a.ClusterSet,
		LabelMember:     a.Member,
	}
}

// owns reports whether labels are exactly this applier's owner labels.
func (a *Applier) owns(labels map[string]string) bool {
	for k, v := range a.ownerLabels() {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func setOwnerLabels(u *unstructured.Unstructured, owner map[string]string) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range owner {
		labels[k] = v
	}
	u.SetLabels(labels)
}
