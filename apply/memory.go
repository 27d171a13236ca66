// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// Memory remembers what an Applier last applied successfully, object by
// object, so that the next apply of the same bytes skips that object's
// collision check, dry run, apply and status write: a cycle then costs API
// calls in proportion to what changed, not to everything imported. The
// whole memory is forgotten after MaxAge (the loop's resync interval), so
// drift, e.g. someone editing an imported object, is still repaired.
type Memory struct {
	// MaxAge bounds how long an object may go without a real apply.
	MaxAge time.Duration

	mu      sync.Mutex
	since   time.Time
	applied map[objKey][32]byte
	// prepared are the desired objects the last apply made, by the built
	// object they were made from.
	prepared preparedObjects
	// pruned is the desired set of the last prune that found nothing
	// left to delete.
	pruned map[objKey]bool
	// reported is, by service, the key (reportKeys) of the export and
	// policy status the last write-back that completed left it with.
	reported map[string][32]byte
	// settled is the generation the member last settled at (Settle).
	settled *uint64
	// checked is what the last contract check found, on the built objects
	// (the BuildCache's, by pointer).
	checked *contract.Checked
}

// checkContract is contract.Check, remembered: a BuildCache hands out the
// same pointers for unchanged chunks, and never changes one, so only the
// objects that are new since the last check are checked, unless one that
// others refer to is new and not equal to the last (contract.CheckAgain).
// At 4,000 objects a whole check costs about 30 ms on these 2 cores
// (BenchmarkBeforeApply), one with a slice moved (its chunk built again)
// about 4.5 ms. A nil Memory checks every time.
func (m *Memory) checkContract(c contract.Member, objs []*unstructured.Unstructured) []contract.Violation {
	if m == nil {
		return contract.Check(c, objs)
	}
	m.mu.Lock()
	last := m.checked
	m.mu.Unlock()
	v, next := contract.CheckAgain(c, objs, last)
	m.mu.Lock()
	m.checked = next
	m.mu.Unlock()
	return v
}

// NewMemory returns an empty Memory forgotten every maxAge.
func NewMemory(maxAge time.Duration) *Memory { return &Memory{MaxAge: maxAge} }

// preparedObjects maps a built object to what prepare made of it. The
// built objects are a BuildCache's, which never changes one it handed
// out, so the same pointer means the same object.
type preparedObjects map[*unstructured.Unstructured]desiredObject

// preparing is one prepare: it looks up in what the last one made, and
// records what it uses, which is all the next one gets.
type preparing struct{ last, next preparedObjects }

func (p *preparing) get(o *unstructured.Unstructured) (desiredObject, bool) {
	if p == nil {
		return desiredObject{}, false
	}
	d, ok := p.last[o]
	return d, ok
}

func (p *preparing) put(o *unstructured.Unstructured, d desiredObject) {
	if p != nil {
		p.next[o] = d
	}
}

// beginPrepare starts a prepare of n objects; a nil Memory prepares every
// object afresh.
func (m *Memory) beginPrepare(n int) *preparing {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return &preparing{last: m.prepared, next: make(preparedObjects, n)}
}

// keepPrepared keeps what one prepare used.
func (m *Memory) keepPrepared(p *preparing) {
	if m == nil || p == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prepared = p.next
}

// Forget makes the next apply do everything. A nil Memory (an Applier
// that remembers nothing, as `apply --ref` uses) has nothing to forget.
func (m *Memory) Forget() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applied, m.pruned, m.reported, m.settled = nil, nil, nil, nil
}

// Settle records that the member holds what its caller calls generation
// gen of its rendered files and report: an apply of them just ended with
// nothing failed, refused or colliding. Settled then answers for gen until
// the memory is forgotten (Forget, or MaxAge past), so that a cycle whose
// change did not reach the member can leave it alone without building,
// preparing or comparing its objects.
func (m *Memory) Settle(gen uint64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied != nil {
		m.settled = &gen
	}
}

// Settled reports whether the member is known to hold generation gen
// (Settle) and the memory still vouches for it at now.
func (m *Memory) Settled(gen uint64, now time.Time) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.settled != nil && *m.settled == gen && m.applied != nil && (m.MaxAge <= 0 || now.Sub(m.since) <= m.MaxAge)
}

// pruneGone says what prune must look at: the keys of objects of ours
// that have left the set since a prune (since the memory was last
// forgotten) left the member holding nothing of ours outside it, or all:
// there was none, and every object must be listed. No keys and not all:
// the set only grew (a new export adds objects), nothing is to delete.
// Objects that someone else labelled as ours wait for the resync, like
// every other drift.
func (m *Memory) pruneGone(keep map[objKey]bool) (gone []objKey, all bool) {
	if m == nil {
		return nil, true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pruned == nil {
		return nil, true
	}
	for k := range m.pruned {
		if !keep[k] {
			gone = append(gone, k)
		}
	}
	return gone, false
}

// pruneDone records that the member holds nothing of ours outside keep:
// a prune against keep completed, or one was not needed and everything
// applied since was in keep.
func (m *Memory) pruneDone(keep map[objKey]bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruned = keep
}

// reportDue is the services of keys whose export and policy status the
// last write-back that completed, since the memory was last forgotten,
// did not leave at that key: all of them when there was none.
func (m *Memory) reportDue(keys map[string][32]byte) map[string]bool {
	due := map[string]bool{}
	var last map[string][32]byte
	if m != nil {
		m.mu.Lock()
		last = m.reported
		m.mu.Unlock()
	}
	for s, k := range keys {
		if have, ok := last[s]; !ok || have != k {
			due[s] = true
		}
	}
	return due
}

// reportDone records a status write-back that completed: every service
// of keys is at its key now.
func (m *Memory) reportDone(keys map[string][32]byte) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reported = keys
}

// changedSince says whether the memory knows the member holds other bytes
// of ours under d's key: an object applied before, since rendered anew.
func (m *Memory) changedSince(d desiredObject) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.applied[d.key]
	return ok && h != d.sum
}

// split partitions desired into the objects to apply and the keys of the
// ones applied before with identical content.
func (m *Memory) split(desired []desiredObject, now time.Time) (fresh []desiredObject, known map[objKey]bool) {
	known = map[objKey]bool{}
	if m == nil {
		return desired, known
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied == nil || (m.MaxAge > 0 && now.Sub(m.since) > m.MaxAge) {
		m.applied, m.pruned, m.reported, m.settled, m.since = map[objKey][32]byte{}, nil, nil, nil, now
	}
	for _, d := range desired {
		if h, ok := m.applied[d.key]; ok && h == d.sum {
			known[d.key] = true
			continue
		}
		fresh = append(fresh, d)
	}
	return fresh, known
}

// remember records the objects just applied and drops the ones no longer
// desired.
func (m *Memory) remember(desired []desiredObject, applied map[objKey]bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[objKey]bool{}
	for _, d := range desired {
		k := d.key
		want[k] = true
		if applied[k] {
			m.applied[k] = d.sum
		}
	}
	for k := range m.applied {
		if !want[k] {
			delete(m.applied, k)
		}
	}
}

// digest covers the object and the status rendered with it.
func digest(d desiredObject) [32]byte {
	b, _ := json.Marshal([]any{d.obj.Object, d.status})
	return sha256.Sum256(b)
}
