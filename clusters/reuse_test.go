// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// What a read must do follows from what the watch saw since the stored
// snapshot's read began: nothing (reuse it), changes placed in a few
// namespaces (list those), anything else (read the member whole).
func TestReadReuseSaysWhatToRead(t *testing.T) {
	var r readReuse
	r.watchStarted(1)
	r.listed()
	want := func(name string, reuse bool, changed []string) {
		t.Helper()
		got, ns, _, ok := r.begin()
		if !ok || (got != nil) != reuse || !slices.Equal(ns, changed) {
			t.Errorf("%s: live %v, reuse %v, namespaces %v; want reuse %v, namespaces %v", name, ok, got != nil, ns, reuse, changed)
		}
	}
	store := func() {
		_, _, gen, _ := r.begin()
		r.store(gen, &snapshot.Snapshot{Member: "m"})
	}
	want("nothing stored", false, nil)
	store()
	want("nothing since", true, nil)

	r.touch("b")
	r.touch("a")
	r.touch("b")
	want("two namespaces", true, []string{"a", "b"})
	_, _, gen, _ := r.begin()
	r.touch("c") // during the read
	r.store(gen, &snapshot.Snapshot{Member: "m"})
	want("a change during the read", true, []string{"c"})
	store()
	want("read again", true, nil)

	r.touch("a")
	r.touch("") // a cluster-scoped object
	want("a change not in a namespace", false, nil)
	store()
	for i := range maxChangedNamespaces + 1 {
		r.touch(fmt.Sprint("ns-", i))
	}
	want("too many namespaces", false, nil)
	store()
	r.touch("a")
	r.failed()
	if _, _, _, ok := r.begin(); ok {
		t.Error("a failing watch is live")
	}
	r.recovered()
	want("a watch that failed and recovered", false, nil)
}
