// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"maps"
	"slices"
	"sync"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// readReuse lets Collect hand out a member's last snapshot instead of
// listing the member again, while a Watch of that member is live and has
// seen nothing since that read began. In run, where a watch is always on,
// a change in one member then costs one member's read, not every
// member's: at 1,000 exported services, listing and loading a member is
// about a second of its apiserver's and this process's time.
//
// Why it gives what a read would: every change to an object the snapshot
// is made from produces a watch event after the watch has listed, and
// every such event bumps gen before the loop is notified. A read stores
// its snapshot with the gen it began at, and only if the watch was live
// then (every required informer had listed and none was failing), so an
// event that arrives during the read makes the stored snapshot unusable.
// A member that fails, a watch that errors or stops, and Set.Forget drop
// the stored snapshot's claim. Optional kinds (ClusterProperty,
// GlobalTrafficPolicy, ServiceCIDR) are not required: an informer's first
// list delivers every object it finds as an event, and these kinds'
// events are never filtered, so they bump gen whenever they may matter.
//
// A change the watch can place in a namespace (every kind the snapshot
// holds but Namespaces, ClusterProperties and ServiceCIDRs) marks that
// namespace: when only a few are marked since the stored snapshot's read
// began, and nothing was unplaceable, Collect lists those namespaces alone
// and keeps the rest of the stored snapshot (readChanged). The same
// argument holds namespace by namespace: an unmarked namespace had no
// event since that read began.
//
// Without a running Watch (the sync command, a CronJob) nothing is ever
// reused.
type readReuse struct {
	mu sync.Mutex
	// pending counts the required informers of a running watch that have
	// not listed yet; failing, those whose last list or watch failed.
	// The watch is live when it runs and both are zero.
	running          bool
	pending, failing int
	gen              uint64
	// touched is, by namespace, the gen of the last change seen there;
	// wideAt the gen of the last one not placed in a namespace (a
	// cluster-scoped object, the watch starting, failing or recovering).
	touched map[string]uint64
	wideAt  uint64

	snap    snapshot.Snapshot
	snapGen uint64
	has     bool
}

// touch records a change (or a possible one) the watch saw in namespace,
// "" when it cannot say where.
func (r *readReuse) touch(namespace string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bump(namespace)
}

// bump is touch with r.mu held.
func (r *readReuse) bump(namespace string) {
	r.gen++
	if namespace == "" {
		r.wideAt = r.gen
		return
	}
	if r.touched == nil {
		r.touched = map[string]uint64{}
	}
	r.touched[namespace] = r.gen
}

func (r *readReuse) live() bool { return r.running && r.pending == 0 && r.failing == 0 }

// maxChangedNamespaces is how many changed namespaces are listed alone;
// more, and the member is read whole.
const maxChangedNamespaces = 8

// begin says what a read starting now must do, and the generation its
// snapshot is stored under (ok: the watch is live):
//   - reuse set, changed nil: nothing changed, reuse is the snapshot;
//   - reuse and changed set: list the namespaces changed alone, and keep
//     the rest of reuse;
//   - reuse nil: read the member whole.
func (r *readReuse) begin() (reuse *snapshot.Snapshot, changed []string, gen uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.live() {
		return nil, nil, 0, false
	}
	if !r.has || r.wideAt > r.snapGen {
		return nil, nil, r.gen, true
	}
	for ns, at := range r.touched {
		if at > r.snapGen {
			changed = append(changed, ns)
		}
	}
	if len(changed) > maxChangedNamespaces {
		return nil, nil, r.gen, true
	}
	slices.Sort(changed)
	cp := r.snap
	return &cp, changed, r.gen, true
}

// store keeps the snapshot of a read that began, with the watch live, at
// gen. s must not be modified afterwards; Collect hands out copies of the
// struct, sharing its slices.
func (r *readReuse) store(gen uint64, s *snapshot.Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap, r.snapGen, r.has = *s, gen, true
	maps.DeleteFunc(r.touched, func(_ string, at uint64) bool { return at <= gen })
}

// forget drops the stored snapshot: the next Collect reads.
func (r *readReuse) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap, r.has = snapshot.Snapshot{}, false
}

// watchStarted is called before the member's informers start.
func (r *readReuse) watchStarted(required int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running, r.pending, r.failing = true, required, 0
	r.bump("")
}

func (r *readReuse) watchStopped() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = false
	r.bump("")
}

// listed is called once per required informer, when it has listed.
func (r *readReuse) listed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending--
}

// failed and recovered track one informer's outage. Both bump gen: what
// happened while it could not watch is only known from a read.
func (r *readReuse) failed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing++
	r.bump("")
}

func (r *readReuse) recovered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing--
	r.bump("")
}
