// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Checked is what one check found, kept so that the next check of a list
// that differs from it only in objects nothing refers to (a moved
// endpoint changes one EndpointSlice) checks those objects alone. The
// objects are compared by pointer: the caller promises that an object it
// checked is never modified afterwards (a BuildCache's are not).
type Checked struct {
	m Member
	c *commit
	// why is each object's verdict, "" when it passed.
	why map[*unstructured.Unstructured]string
	// refs are the objects others may refer to: ServiceImports, Services
	// and ListenerSets, which Check indexes as it goes.
	refs map[*unstructured.Unstructured]bool
	// objs and violations are the list checked and what was found, for a
	// check of the very same list (an unchanged member).
	objs       []*unstructured.Unstructured
	violations []Violation
}

// CheckAgain is Check, given what the last check of the same member found
// (nil: none). When the contract and every object that others may refer
// to are the same as then, only the objects last did not see are checked;
// otherwise everything is. The violations are Check's, in objs order.
func CheckAgain(m Member, objs []*unstructured.Unstructured, last *Checked) ([]Violation, *Checked) {
	if last != nil && last.m == m && slices.Equal(last.objs, objs) {
		return last.violations, last
	}
	v, next := checkAgain(m, objs, last)
	next.objs, next.violations = slices.Clone(objs), v
	return v, next
}

func checkAgain(m Member, objs []*unstructured.Unstructured, last *Checked) ([]Violation, *Checked) {
	refs := map[*unstructured.Unstructured]bool{}
	for _, u := range objs {
		if referred(u) {
			refs[u] = true
		}
	}
	if last == nil || last.m != m || !samePointers(last.refs, refs) {
		c, why := check(m, objs)
		next := &Checked{m: m, c: c, why: make(map[*unstructured.Unstructured]string, len(objs)), refs: refs}
		for i, u := range objs {
			next.why[u] = why[i]
		}
		return violations(objs, why), next
	}
	why := make([]string, len(objs))
	next := &Checked{m: m, c: last.c, why: make(map[*unstructured.Unstructured]string, len(objs)), refs: refs}
	for i, u := range objs {
		w, ok := last.why[u]
		if !ok {
			// Not a referred kind (those are all in last), so checking it
			// reads the index and adds nothing to it.
			w = last.c.check(u)
		}
		why[i], next.why[u] = w, w
	}
	return violations(objs, why), next
}

func referred(u *unstructured.Unstructured) bool {
	switch u.GroupVersionKind().GroupKind() {
	case ServiceImportKind, ServiceKind, ListenerSetKind:
		return true
	}
	return false
}

func samePointers(a, b map[*unstructured.Unstructured]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for u := range b {
		if !a[u] {
			return false
		}
	}
	return true
}
