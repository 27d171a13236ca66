// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/benchmem"
	"github.com/mcs-gitops/mcs-gitops/test/benchprof"
)

// BenchmarkCycle times the part of a sync cycle between reading the members
// and applying to them: render on top of HEAD, decide what changed, write
// the message, commit, push to a bare remote on disk, and hand apply its
// files and report. "no-change" is the steady state; "one-change" moves
// one endpoint of one exporter each cycle, so every cycle commits the
// copies of that slice in every importer; "floor" commits and pushes the
// files a one-change cycle changes, alone in a repository of their own:
// the cost of the change with no world around it.
//
// Files go under $MCS_BENCH_DIR when set (a tmpfs separates the code's
// cost from the disk's).
func BenchmarkCycle(b *testing.B) {
	for _, w := range generate.Worlds() {
		b.Run(w.Name, func(b *testing.B) {
			cfg, l, results, moved := cycleWorld(b, w)
			ctx := context.Background()
			if _, err := l.publish(ctx, results); err != nil {
				b.Fatal(err)
			}
			b.Run("no-change", func(b *testing.B) {
				peak := benchmem.Start()
				for b.Loop() {
					p, err := l.publish(ctx, results)
					if err != nil || p.changed {
						b.Fatalf("an unchanged world: changed=%v err=%v", p != nil && p.changed, err)
					}
				}
				peak.Report(b)
			})
			b.Run("one-change", func(b *testing.B) {
				worlds := [2][]clusters.Result{moved, results}
				stop := benchprof.Loop(b)
				defer stop()
				i := 0
				for b.Loop() {
					p, err := l.publish(ctx, worlds[i%2])
					if err != nil || !p.changed {
						b.Fatalf("a changed world: changed=%v err=%v", p != nil && p.changed, err)
					}
					i++
				}
				if i%2 == 1 {
					if _, err := l.publish(ctx, results); err != nil {
						b.Fatal(err)
					}
				}
			})
			// The same churn with spec.rollout set: what looking for a
			// change to stage costs a cycle that has none (sameShape).
			b.Run("one-change-rollout-policy", func(b *testing.B) {
				l.Config.Spec.Rollout = v1alpha1.RolloutPolicy{Waves: []v1alpha1.RolloutWave{
					{Name: "first", Members: v1alpha1.MemberSelector{Names: []string{l.Config.Spec.Members[0].Name}}}}}
				defer func() { l.Config.Spec.Rollout = v1alpha1.RolloutPolicy{} }()
				worlds := [2][]clusters.Result{moved, results}
				i := 0
				for b.Loop() {
					p, err := l.publish(ctx, worlds[i%2])
					if err != nil || !p.changed || p.tree.rollouts == nil || len(p.tree.rollouts.state.Rollouts) > 0 {
						b.Fatalf("churn, staging nothing: changed=%v err=%v", p != nil && p.changed, err)
					}
					i++
				}
				if i%2 == 1 {
					if _, err := l.publish(ctx, results); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("floor", func(b *testing.B) {
				cycleFloor(b, l, cfg, results, moved)
			})
		})
	}
}

// cycleFloor times what a one-change cycle cannot do without: one commit
// of the files it changes and one push, to a repository holding only
// those files (no world to render, compare or walk).
func cycleFloor(b *testing.B, l *Loop, cfg *v1alpha1.ClusterSet, results, moved []clusters.Result) {
	ctx := context.Background()
	var sides [2]map[string][]byte
	for i, r := range [2][]clusters.Result{moved, results} {
		p, err := l.publish(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		sides[i] = p.files
	}
	changed := map[string]bool{}
	for p, data := range sides[0] {
		if string(sides[1][p]) != string(data) {
			changed[p] = true
		}
	}
	for p := range sides[1] {
		if _, ok := sides[0][p]; !ok {
			changed[p] = true
		}
	}
	var only [2]map[string][]byte
	for i := range sides {
		only[i] = map[string][]byte{}
		for p := range changed {
			if data, ok := sides[i][p]; ok {
				only[i][p] = data
			}
		}
	}
	repo := benchLoop(b, cfg).Repo
	commit := func(files map[string][]byte) {
		if _, changed, err := repo.Commit(maps.Clone(files), layout.Roots, gitsync.StaticMessage("floor")); err != nil || !changed {
			b.Fatalf("floor commit: changed=%v err=%v", changed, err)
		}
		if err := repo.Push(ctx); err != nil {
			b.Fatal(err)
		}
	}
	commit(only[1])
	i := 0
	for b.Loop() {
		commit(only[i%2])
		i++
	}
	b.ReportMetric(float64(len(changed)), "files")
}

// BenchmarkCycleSteady runs one-change cycles (as BenchmarkCycle) and
// reports the live heap after a full collection once 10 cycles ran and
// again at the end, and the resident set at the end: a cycle that leaks
// shows as growth. Run it long, e.g. -benchtime 1000x.
func BenchmarkCycleSteady(b *testing.B) {
	for _, w := range generate.Worlds() {
		b.Run(w.Name, func(b *testing.B) {
			_, l, results, moved := cycleWorld(b, w)
			worlds := [2][]clusters.Result{moved, results}
			ctx := context.Background()
			const warm = 10
			var atWarm uint64
			i := 0
			for b.Loop() {
				p, err := l.publish(ctx, worlds[i%2])
				if err != nil || (i > 0 && !p.changed) {
					b.Fatalf("cycle %d: changed=%v err=%v", i, p != nil && p.changed, err)
				}
				i++
				if i == warm {
					b.StopTimer()
					atWarm = benchmem.Live()
					b.StartTimer()
				}
			}
			if i <= warm {
				b.Logf("%d cycles: run more than %d to see growth", i, warm)
				return
			}
			end := benchmem.Live()
			runtime.KeepAlive(l) // what the loop keeps between cycles is what is measured
			b.ReportMetric(float64(atWarm)/(1<<20), "live-heap-at-10-MiB")
			b.ReportMetric(float64(end)/(1<<20), "live-heap-at-end-MiB")
			b.ReportMetric((float64(end)-float64(atWarm))/float64(i-warm)/(1<<10), "growth-KiB/cycle")
			if rss, ok := benchmem.RSS(); ok {
				b.ReportMetric(float64(rss)/(1<<20), "rss-at-end-MiB")
			}
		})
	}
}

// cycleWorld loads w into a fresh benchLoop and returns what a read of
// every member gives, and the same with one endpoint moved.
func cycleWorld(b *testing.B, w generate.World) (*v1alpha1.ClusterSet, *Loop, []clusters.Result, []clusters.Result) {
	b.Helper()
	cfg, snaps, err := w.Load()
	if err != nil {
		b.Fatal(err)
	}
	results := readResults(snaps)
	return cfg, benchLoop(b, cfg), results, moveOneEndpoint(b, results)
}

// readResults are snaps as a successful read of every member gives them.
func readResults(snaps []*snapshot.Snapshot) []clusters.Result {
	results := make([]clusters.Result, len(snaps))
	for i, s := range snaps {
		results[i] = clusters.Result{Member: s.Member, Snapshot: s}
	}
	return results
}

// benchLoop is a Loop on a fresh clone of an empty bare repository, with
// no members: publish never reads or applies to one.
func benchLoop(b testing.TB, cfg *v1alpha1.ClusterSet) *Loop {
	b.Helper()
	base := b.TempDir()
	if parent := os.Getenv("MCS_BENCH_DIR"); parent != "" {
		var err error
		if base, err = os.MkdirTemp(parent, "mcs-gitops-bench"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(base) })
	}
	bare := filepath.Join(base, "remote.git")
	if _, err := git.PlainInit(bare, true); err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	repo, err := gitsync.Open(context.Background(), gitsync.Options{URL: bare, Workdir: filepath.Join(base, "clone"), Log: quiet})
	if err != nil {
		b.Fatal(err)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	return &Loop{Config: cfg, ConfigBytes: data, Repo: repo, Log: quiet, Now: func() time.Time { return now }}
}

// moveOneEndpoint returns results with the first address of the first
// exported slice of the first member that has one changed.
func moveOneEndpoint(b testing.TB, results []clusters.Result) []clusters.Result {
	b.Helper()
	out := append([]clusters.Result{}, results...)
	for i, r := range out {
		if len(r.Snapshot.EndpointSlices) == 0 {
			continue
		}
		s := *r.Snapshot
		s.EndpointSlices = append([]discoveryv1.EndpointSlice{}, s.EndpointSlices...)
		es := s.EndpointSlices[0].DeepCopy()
		es.Endpoints[0].Addresses = []string{movedAddress(es.AddressType)}
		s.EndpointSlices[0] = *es
		out[i].Snapshot = &s
		return out
	}
	b.Fatal("no member has an EndpointSlice")
	return nil
}

func movedAddress(t discoveryv1.AddressType) string {
	if t == discoveryv1.AddressTypeIPv6 {
		return "fd00:ffff::1"
	}
	return "10.255.255.1"
}
