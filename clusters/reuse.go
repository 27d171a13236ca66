// SPDX-License-Identifier: Apache-2.0

package clusters

import (
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

	snap    snapshot.Snapshot
	snapGen uint64
	has     bool
}

// touch records a change (or a possible one) the watch saw.
func (r *readReuse) touch() {
	r.mu.Lock()
	r.gen++
	r.mu.Unlock()
}

func (r *readReuse) live() bool { return r.running && r.pending == 0 && r.failing == 0 }

// begin returns the snapshot to reuse, if any, and else the generation a
// read starting now should be stored under (ok: the watch is live).
func (r *readReuse) begin() (reuse *snapshot.Snapshot, gen uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.live() {
		return nil, 0, false
	}
	if r.has && r.snapGen == r.gen {
		cp := r.snap
		return &cp, r.gen, true
	}
	return nil, r.gen, true
}

// store keeps the snapshot of a read that began, with the watch live, at
// gen. s must not be modified afterwards; Collect hands out copies of the
// struct, sharing its slices.
func (r *readReuse) store(gen uint64, s *snapshot.Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap, r.snapGen, r.has = *s, gen, true
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
	r.gen++
}

func (r *readReuse) watchStopped() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = false
	r.gen++
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
	r.gen++
}

func (r *readReuse) recovered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing--
	r.gen++
}
