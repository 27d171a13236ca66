// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Checked is what one check found, kept so that the next check of a list
// that differs from it only in objects nothing refers to (a moved
// endpoint changes one EndpointSlice) checks those objects alone. The
// objects are compared by pointer first: the caller promises that an
// object it checked is never modified afterwards (a BuildCache's are not).
type Checked struct {
	m Member
	c *commit
	// why is each object's verdict, "" when it passed.
	why map[*unstructured.Unstructured]string
	// refs are the objects others may refer to (ServiceImports, Services
	// and ListenerSets, which check indexes as it goes), by kind,
	// namespace and name.
	refs map[refKey]*unstructured.Unstructured
	// objs and violations are the list checked and what was found, for a
	// check of the very same list (an unchanged member).
	objs       []*unstructured.Unstructured
	violations []Violation
}

type refKey struct{ kind, namespace, name string }

// CheckAgain is Check, given what the last check of the same member found
// (nil: none). When the contract and every object that others may refer
// to are the same as then (the same pointers, or equal objects: a kustomize
// run over a chunk of files builds all of the chunk's objects again), only
// the objects last did not see are checked; otherwise everything is. The
// violations are Check's, in objs order.
func CheckAgain(m Member, objs []*unstructured.Unstructured, last *Checked) ([]Violation, *Checked) {
	if last != nil && last.m == m && slices.Equal(last.objs, objs) {
		return last.violations, last
	}
	v, next := checkAgain(m, objs, last)
	next.objs, next.violations = slices.Clone(objs), v
	return v, next
}

func checkAgain(m Member, objs []*unstructured.Unstructured, last *Checked) ([]Violation, *Checked) {
	refs := map[refKey]*unstructured.Unstructured{}
	for _, u := range objs {
		if referred(u) {
			refs[keyOf(u)] = u
		}
	}
	next := &Checked{m: m, why: make(map[*unstructured.Unstructured]string, len(objs)), refs: refs}
	why := make([]string, len(objs))
	if last == nil || last.m != m || !sameRefs(last.refs, refs) {
		next.c, why = check(m, objs)
	} else {
		next.c = last.c
		for i, u := range objs {
			w, ok := last.why[u]
			switch {
			case ok:
			case referred(u):
				// Equal to the one last checked (sameRefs): its verdict.
				w = last.why[last.refs[keyOf(u)]]
			default:
				// Checking an object of another kind reads the index and
				// adds nothing to it.
				w = last.c.check(u)
			}
			why[i] = w
		}
	}
	for i, u := range objs {
		next.why[u] = why[i]
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

func keyOf(u *unstructured.Unstructured) refKey {
	return refKey{kind: u.GetKind(), namespace: u.GetNamespace(), name: u.GetName()}
}

// sameRefs says whether b holds the same objects as a, each the same
// pointer or an equal object.
func sameRefs(a, b map[refKey]*unstructured.Unstructured) bool {
	if len(a) != len(b) {
		return false
	}
	for k, u := range b {
		old, ok := a[k]
		if !ok || (old != u && !reflect.DeepEqual(old.Object, u.Object)) {
			return false
		}
	}
	return true
}
