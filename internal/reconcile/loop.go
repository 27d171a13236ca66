// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/lineage"
	"github.com/mcs-gitops/mcs-gitops/internal/review/propose"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Loop holds what every cycle needs. Build one with the clients and the
// repository already open. What the world is, is in Git; between cycles
// it keeps only caches that save work and never change an outcome: per
// member what was last applied (forgotten every resyncInterval) and the
// kustomize output of its directory's chunks (keyed by the files' bytes);
// what the last commit read says; each member's last snapshot as
// normalized; the last render that changed nothing, with what it was made
// from; and in Repo the HEAD tree's blob hashes and
// whether the worktree holds HEAD.
type Loop struct {
	Config *v1alpha1.ClusterSet
	// ConfigBytes is clusterset.yaml as the user wrote it, committed
	// verbatim. Loading already refused any inline credential.
	ConfigBytes []byte
	// Inventory is status/inventory.yaml, the members spec.inventory
	// gave when Config was put together (layout.FormatInventory); nil
	// without an inventory. Config holds those members already.
	Inventory []byte
	Members   *clusters.Set
	// Source is what a cycle reads the members through; nil reads
	// Members. The offline script tests give snapshots from files here.
	Source Source
	Repo   *gitsync.Repo
	Log    *slog.Logger
	// Metrics may be nil.
	Metrics *Metrics
	// Apply says what a cycle does to the members after it commits:
	// ApplyAll (the default), ApplyStatusOnly (another applier applies
	// the directories) or ApplyNone.
	Apply ApplyMode
	// Events turns on Kubernetes Events on exports, imports and policies
	// in each member; call CloseEvents when done.
	Events bool
	// Review turns review mode on (propose.New); nil when off.
	Review *propose.Reviewer
	// Now is the clock; tests pin it. Defaults to time.Now.
	Now func() time.Time
	// Fence, when set (Lead gives it), is asked before a cycle applies
	// anything; the Repo's gitsync.Options.Fence guards its pushes. A
	// fenced cycle fails with an error wrapping ErrFenced.
	Fence Fence
	// Gates, when set, checks a rollout's gates in a member; nil reads
	// the member's ServiceImport and derived Service (memberGates).
	Gates GateChecker
	// Lineage, when set, keeps the last commit pushed outside this
	// process (lineage.ConfigMap), so a restart or a CronJob's fresh
	// clone also refuses a branch rewritten below it. Without it the
	// line is kept in memory only.
	Lineage lineage.Store

	// memories keep, per member, what was last applied, so a cycle only
	// sends what changed; forgotten every resyncInterval.
	memories sync.Map // member name -> *apply.Memory
	// builds keep, per member, the kustomize output of each chunk of its
	// directory, so a cycle builds only the files that changed.
	builds sync.Map // member name -> *apply.BuildCache
	// recorders hold each member's event broadcaster (Events).
	recorders sync.Map // member name -> *memberEvents

	cacheMu sync.Mutex
	// committed is what commit committedAt says (readCommitted).
	committed   *layout.Committed
	committedAt plumbing.Hash
	// unchanged is the last render that changed nothing (see publish).
	unchanged *unchangedRender
	// rendererChecked is the last head whose renderer migrate looked at
	// and found nothing to do for.
	rendererChecked plumbing.Hash
	// norm remembers each member's last normalized snapshot; parts how
	// the last one was laid out as files.
	norm  *snapshot.NormalizeCache
	parts map[string]memberParts
	// renderer keeps what each service last rendered to, so a change
	// renders and serializes only the services it touches; rendererMu
	// serializes its use (a diff can render beside the cycle).
	rendererMu sync.Mutex
	renderer   *layout.Renderer
	// gens are the members' generations (generations); lastTree,
	// lastJoined and lastParts the last render's files, members'
	// snapshots and their input files (movedSnapshots, treeChanges).
	// Under rendererMu.
	gens       map[string]uint64
	lastTree   map[string][]byte
	lastJoined map[string][]byte
	lastParts  map[string]map[string][]byte
	// followed is when the branch was last fetched (follow).
	followed time.Time
	// progress is, per rolling service, what the loop saw of its
	// current wave's gates after applying it (observeRollouts);
	// rolloutGen moves on when that calls for a commit (a gate failed,
	// a soak ended), so the last unchanged render is not reused.
	progress    map[string]*rollout.Progress
	rolloutGen  int
	rolloutWake time.Time
	// paused are the pauses announced by an Event (announcePause).
	paused map[string]bool

	// line is the branch's lineage; only the cycle touches it.
	line lineageState
	// announced is, per member the withdrawal guard holds, the digest
	// of the hold last announced by an Event; only the cycle touches it.
	announced map[string]string
}

// Source reads every member once, each within timeout, a failure
// classified in its Result; *clusters.Set is the one that talks to
// members.
type Source interface {
	Collect(ctx context.Context, timeout time.Duration) []clusters.Result
}

func (l *Loop) source() Source {
	if l.Source != nil {
		return l.Source
	}
	return l.Members
}

// ApplyMode is what a cycle does to the members after it commits.
type ApplyMode string

// Apply modes; docs/flux-argo.md says when to use which.
const (
	// ApplyAll applies every member's directory and writes status.
	ApplyAll ApplyMode = "all"
	// ApplyStatusOnly writes only what mcs-gitops alone can write (import
	// spec.ips and status, export conditions, policy status), for members
	// whose directories Flux or Argo CD applies.
	ApplyStatusOnly ApplyMode = "status-only"
	// ApplyNone collects, renders, commits and pushes only.
	ApplyNone ApplyMode = "none"
)

func (l *Loop) normalized() *snapshot.NormalizeCache {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	if l.norm == nil {
		l.norm = snapshot.NewNormalizeCache()
	}
	return l.norm
}

func (l *Loop) memory(member string) *apply.Memory {
	m, _ := l.memories.LoadOrStore(member, apply.NewMemory(l.Config.Spec.Sync.Timings().ResyncInterval))
	return m.(*apply.Memory)
}

func (l *Loop) buildCache(member string) *apply.BuildCache {
	c, _ := l.builds.LoadOrStore(member, apply.NewBuildCache())
	return c.(*apply.BuildCache)
}

func (l *Loop) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Loop) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.Default()
}
