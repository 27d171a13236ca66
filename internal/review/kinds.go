// SPDX-License-Identifier: Apache-2.0

package review

import (
	"slices"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Kind is a kind of structural change; spec.review.kinds says which need
// approval. The config owns the names (and checks them when it loads).
type Kind = v1alpha1.ReviewKind

// The kinds, in the order proposals list them.
const (
	// KindMember: a member whose structure the branch has never held.
	KindMember = v1alpha1.ReviewMember
	// KindExport: a member exports a service, or changes what it exports
	// (the Service's type or ports, the export recreated).
	KindExport = v1alpha1.ReviewExport
	// KindWithdrawal: a member stops exporting a service.
	KindWithdrawal = v1alpha1.ReviewWithdrawal
	// KindImport: a member gets a service's ServiceImport.
	KindImport = v1alpha1.ReviewImport
	// KindConflict: a conflict appears or goes, or its winner changes.
	KindConflict = v1alpha1.ReviewConflict
	// KindPolicy: what a GlobalTrafficPolicy asks for, or whom it routes to.
	KindPolicy = v1alpha1.ReviewPolicy
	// KindGateway: a gateway's TCP port allocations.
	KindGateway = v1alpha1.ReviewGateway
)

// AllKinds are every kind, the default set when review is on.
var AllKinds = v1alpha1.ReviewKinds

func sortKinds(ks []Kind) []Kind {
	slices.SortFunc(ks, func(a, b Kind) int { return slices.Index(AllKinds, a) - slices.Index(AllKinds, b) })
	return ks
}
