package review

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is a kind of structural change; spec.review.kinds says which need
// approval.
type Kind string

// The kinds, in the order proposals list them.
const (
	// KindMember: a member whose structure the branch has never held.
	KindMember Kind = "Member"
	// KindExport: a member exports a service, or changes what it exports
	// (the Service's type or ports, the export recreated).
	KindExport Kind = "Export"
	// KindWithdrawal: a member stops exporting a service.
	KindWithdrawal Kind = "Withdrawal"
	// KindImport: a member gets a service's ServiceImport.
	KindImport Kind = "Import"
	// KindConflict: a conflict appears or goes, or its winner changes.
	KindConflict Kind = "Conflict"
	// KindPolicy: what a GlobalTrafficPolicy asks for, or whom it routes to.
	KindPolicy Kind = "Policy"
	// KindGateway: a gateway's TCP port allocations.
	KindGateway Kind = "Gateway"
)

// AllKinds are every kind, the default set when review is on.
var AllKinds = []Kind{KindMember, KindExport, KindWithdrawal, KindImport, KindConflict, KindPolicy, KindGateway}

// ParseKinds checks names against the known kinds; empty means all.
func ParseKinds(names []string) ([]Kind, error) {
	if len(names) == 0 {
		return AllKinds, nil
	}
	var out []Kind
	for _, n := range names {
		k := Kind(n)
		if !slices.Contains(AllKinds, k) {
			return nil, fmt.Errorf("unknown review kind %q (known: %s)", n, kindList(AllKinds))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return sortKinds(out), nil
}

func sortKinds(ks []Kind) []Kind {
	slices.SortFunc(ks, func(a, b Kind) int { return slices.Index(AllKinds, a) - slices.Index(AllKinds, b) })
	return ks
}

func kindList(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
