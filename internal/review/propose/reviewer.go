// SPDX-License-Identifier: Apache-2.0

package propose

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/review"
	"github.com/mcs-gitops/mcs-gitops/internal/review/forge"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Reviewer is review mode's part of the loop (docs/review-mode.md): the
// forge, the kinds that wait for approval, and what the forge last said
// of each proposal. The loop's Review is nil when review mode is off.
type Reviewer struct {
	Forge forge.Client
	// Kinds need approval; review.AllKinds when empty.
	Kinds []review.Kind
	// Poll is how often the forge is asked about open proposals (and the
	// branch fetched for their merges).
	Poll time.Duration
	// Base is the branch proposals go into.
	Base string

	mu sync.Mutex
	// requests are, by proposal name, the newest request the forge has
	// for its branch, as last seen.
	requests map[string]*forge.Request
	polled   time.Time
	// gen counts changes of requests: a render depends on them (URLs,
	// rejections), so an unchanged render is reused only at the same gen.
	gen int
	// approved is the approved world of commit approvedHead.
	approved     map[string]*snapshot.Snapshot
	approvedHead plumbing.Hash
	// taken are the proposals whose branch someone else pushed to: the
	// loop no longer rebuilds them (gitsync.ErrBranchTaken).
	taken map[string]bool
}

// Taken says whether someone else pushed to proposal name's branch.
func (rv *Reviewer) Taken(name string) bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.taken[name]
}

// SetTaken records whether someone else pushed to proposal name's
// branch: the loop no longer rebuilds it.
func (rv *Reviewer) SetTaken(name string, taken bool) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.taken == nil {
		rv.taken = map[string]bool{}
	}
	if taken {
		rv.taken[name] = true
	} else {
		delete(rv.taken, name)
	}
}

// DefaultPoll is how often the forge is asked about open proposals
// when spec.review.pollInterval is empty.
const DefaultPoll = 30 * time.Second

// New is review mode as cfg.Spec.Review sets it, on the forge fc.
func New(cfg *v1alpha1.ClusterSet, fc forge.Client) (*Reviewer, error) {
	r := cfg.Spec.Review
	kinds := r.Kinds // checked when the config loaded
	poll, err := r.PollInterval.Get(DefaultPoll)
	if err != nil {
		return nil, fmt.Errorf("spec.review.pollInterval: %w", err)
	}
	base := cfg.Spec.Git.Branch
	if base == "" {
		base = v1alpha1.DefaultBranch
	}
	return &Reviewer{Forge: fc, Kinds: kinds, Poll: poll, Base: base}, nil
}

// Request is the newest request the forge has for proposal name's
// branch, as last seen; nil when none.
func (rv *Reviewer) Request(name string) *forge.Request {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.requests[name]
}

// SetRequest records what the forge said of proposal name's request
// (nil: none); a change of number, state or URL is a new generation.
func (rv *Reviewer) SetRequest(name string, r *forge.Request) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.requests == nil {
		rv.requests = map[string]*forge.Request{}
	}
	old := rv.requests[name]
	if old == nil && r == nil {
		return
	}
	if old != nil && r != nil && old.Number == r.Number && old.State == r.State && old.URL == r.URL {
		rv.requests[name] = r
		return
	}
	if r == nil {
		delete(rv.requests, name)
	} else {
		rv.requests[name] = r
	}
	rv.gen++
}

// Dirty makes the next cycle render again, so that proposals a failed
// push or forge call left behind are brought up to date.
func (rv *Reviewer) Dirty() {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.gen++
}

// Generation counts changes of what the forge said: a render depends on
// them, so an unchanged render is reused only at the same generation. A
// nil Reviewer is at 0.
func (rv *Reviewer) Generation() int {
	if rv == nil {
		return 0
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.gen
}

// NeedApproval are the kinds of change that wait for a person.
func (rv *Reviewer) NeedApproval() []review.Kind {
	if len(rv.Kinds) == 0 {
		return review.AllKinds
	}
	return rv.Kinds
}

// Due says whether the forge is to be asked again: never asked yet, or
// Poll has passed since.
func (rv *Reviewer) Due(now time.Time) bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.polled.IsZero() || now.Sub(rv.polled) >= rv.Poll
}

// Approved is the approved world of commit head, whose inputs/ files
// inputs are: parsed once per commit.
func (rv *Reviewer) Approved(head plumbing.Hash, inputs map[string][]byte) (map[string]*snapshot.Snapshot, error) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.approved != nil && rv.approvedHead == head {
		return rv.approved, nil
	}
	a, err := parseApproved(inputs)
	if err != nil {
		return nil, err
	}
	rv.approved, rv.approvedHead = a, head
	return a, nil
}

// parseApproved reads the branch's inputs/ back: the approved world.
func parseApproved(inputs map[string][]byte) (map[string]*snapshot.Snapshot, error) {
	out := make(map[string]*snapshot.Snapshot, len(inputs))
	for m, b := range inputs {
		s, err := snapshot.Parse(m, layout.InputDir(m), b)
		if err != nil {
			return nil, fmt.Errorf("review: the branch's %s: %w", layout.InputDir(m), err)
		}
		out[m] = s
	}
	return out, nil
}

// Never says whether the forge was never asked in this process.
func (rv *Reviewer) Never() bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.polled.IsZero()
}

// MarkPolled records that the forge was asked at now.
func (rv *Reviewer) MarkPolled(now time.Time) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.polled = now
}
