// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/test/benchprof"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// BenchmarkFleet runs the loop on 3 real members seeded with a generated
// world (MCS_BENCH_SERVICES services, default 100, each exported from 2
// members with 10 endpoints, so each member imports about 4 objects per
// service; MCS_BENCH_QPS sets spec.sync.memberQPS), each figure beside
// its floor measured in the same run (MCS_BENCH_LOG=<file> writes the
// loop's JSON log there: each cycle's "cycle done" and each member's
// "applied" line carry how long each phase and step took):
//
//   - rejoin: a loop that remembers nothing applies the committed world to
//     members holding none of it (a first sync, a restart after the
//     members were rebuilt); floor: the same objects as one server-side
//     apply PATCH each, sequentially per member, members in parallel.
//   - no-change: a whole cycle (read, render, commit nothing, apply
//     nothing); it must write nothing.
//   - one-change: one endpoint moves in one member, then one cycle, until
//     every member holds the change.
//   - watched/no-change and watched/one-change: the same with the members
//     watched, as run has them, so that a member whose watch saw nothing
//     is not listed again (the changed one is, after its notification).
func BenchmarkFleet(b *testing.B) {
	services := 100
	if v := os.Getenv("MCS_BENCH_SERVICES"); v != "" {
		var err error
		if services, err = strconv.Atoi(v); err != nil {
			b.Fatalf("MCS_BENCH_SERVICES=%q: %v", v, err)
		}
	}
	extra := ""
	if v := os.Getenv("MCS_BENCH_QPS"); v != "" {
		extra = "    memberQPS: " + v + "\n"
	}
	w := newWorld(b, 3, extra)
	// One log for the whole benchmark: a sub-benchmark's would be closed
	// when it ends, while its loop goes on into the next.
	log := benchLog(b)
	w.loop.Log = log
	ctx := context.Background()
	namespaces := seedGenerated(b, w, services)
	first := time.Now()
	out := w.sync()
	require.Empty(b, out.FailedMembers())
	b.Logf("first sync (read, render, commit, apply everything): %s", time.Since(first).Round(time.Millisecond))
	// Each new loop gets its own clone, kept until the whole benchmark
	// ends: the last one is used by the sub-benchmarks after it.
	parent := b.TempDir()
	clones := 0
	workdir := func() string { clones++; return filepath.Join(parent, fmt.Sprint("clone-", clones)) }

	b.Run(fmt.Sprintf("services=%d/rejoin", services), func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			deleteApplied(b, w, namespaces)
			w.loop = w.newLoop(workdir())
			w.loop.Log = log
			b.StartTimer()
			_, err := w.loop.ApplyRef(ctx, out.Commit, false)
			require.NoError(b, err)
		}
	})
	b.Run(fmt.Sprintf("services=%d/rejoin-floor", services), func(b *testing.B) {
		files, err := w.loop.Repo.Files(out.Commit, layout.ClustersDir)
		require.NoError(b, err)
		objs := map[string][]*unstructured.Unstructured{}
		for _, m := range w.members {
			objs[m.Name], err = apply.Build(files, m.Name)
			require.NoError(b, err)
		}
		b.Logf("objects per member: %d", len(objs[w.members[0].Name]))
		for b.Loop() {
			b.StopTimer()
			deleteApplied(b, w, namespaces)
			b.StartTimer()
			var wg sync.WaitGroup
			for _, m := range w.members {
				wg.Go(func() {
					for _, o := range objs[m.Name] {
						o := o.DeepCopy()
						if o.GetKind() == "Namespace" {
							continue
						}
						if err := m.Client.Patch(ctx, o, client.Apply, client.FieldOwner("floor"), client.ForceOwnership); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		}
		b.StopTimer()
		deleteApplied(b, w, namespaces)
		w.loop = w.newLoop(workdir())
		w.loop.Log = log
		_, err = w.loop.ApplyRef(ctx, out.Commit, false)
		require.NoError(b, err)
	})
	// noChange times cycles of an unchanged world after warm ones that
	// settle it, and checks that they wrote nothing.
	noChange := func(b *testing.B, warm int) {
		for range warm {
			w.sync()
		}
		before := resourceVersions(b, w.members)
		for b.Loop() {
			if o := w.sync(); o.Committed {
				b.Fatal("an unchanged world committed")
			}
		}
		require.Equal(b, before, resourceVersions(b, w.members), "a no-change cycle wrote to a member")
	}
	b.Run(fmt.Sprintf("services=%d/no-change", services), func(b *testing.B) { noChange(b, 1) })
	c1 := w.members[0]
	var list discoveryv1.EndpointSliceList
	require.NoError(b, c1.Client.List(ctx, &list, client.InNamespace(namespaces[0]),
		client.MatchingLabels{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}))
	require.NotEmpty(b, list.Items)
	slice := list.Items[0]
	moves := 0
	move := func() {
		moves++
		slice.Endpoints[0].Addresses = []string{fmt.Sprintf("10.250.%d.%d", moves/250, moves%250+1)}
		require.NoError(b, c1.Client.Update(ctx, &slice))
	}
	b.Run(fmt.Sprintf("services=%d/one-change", services), func(b *testing.B) {
		for b.Loop() {
			move()
			if o := w.sync(); !o.Committed {
				b.Fatal("a moved endpoint did not commit")
			}
		}
	})
	// The writes one-change makes in the members, alone: each member's
	// copy of the moved slice, one server-side apply PATCH with its
	// address moved, members in parallel (the Git side of the floor is
	// BenchmarkCycle's).
	b.Run(fmt.Sprintf("services=%d/one-change-floor", services), func(b *testing.B) {
		head, err := w.loop.Repo.Head()
		require.NoError(b, err)
		files, err := w.loop.Repo.Files(head, layout.ClustersDir)
		require.NoError(b, err)
		derived := render.DerivedServiceName(slice.Namespace, slice.Labels[discoveryv1.LabelServiceName])
		copies := map[string][]*unstructured.Unstructured{}
		for _, m := range w.members {
			objs, err := apply.Build(files, m.Name)
			require.NoError(b, err)
			for _, o := range objs {
				if o.GetKind() == "EndpointSlice" && o.GetNamespace() == slice.Namespace &&
					o.GetLabels()[discoveryv1.LabelServiceName] == derived && o.GetLabels()[mcsv1alpha1.LabelSourceCluster] == c1.Name {
					copies[m.Name] = append(copies[m.Name], o)
				}
			}
			require.NotEmpty(b, copies[m.Name], "%s holds no copy of the moved slice", m.Name)
		}
		n := 0
		for b.Loop() {
			n++
			var wg sync.WaitGroup
			for _, m := range w.members {
				wg.Go(func() {
					for _, o := range copies[m.Name] {
						o := o.DeepCopy()
						eps, _, _ := unstructured.NestedSlice(o.Object, "endpoints")
						eps[0].(map[string]any)["addresses"] = []any{fmt.Sprintf("10.251.%d.%d", n/250, n%250+1)}
						_ = unstructured.SetNestedSlice(o.Object, eps, "endpoints")
						if err := m.Client.Patch(ctx, o, client.Apply, client.FieldOwner("floor"), client.ForceOwnership); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		}
	})
	// As run has them: the members watched, so a cycle lists only the
	// members whose watch saw a change (the others answer one GET).
	events := watchMembers(b, w)
	b.Run(fmt.Sprintf("services=%d/watched/no-change", services), func(b *testing.B) { noChange(b, 2) })
	b.Run(fmt.Sprintf("services=%d/watched/one-change", services), func(b *testing.B) {
		// Run alone, it must first have each member read with its watch
		// live, as watched/no-change does.
		for range 2 {
			w.sync()
		}
		defer benchprof.Loop(b)()
		for b.Loop() {
			b.StopTimer()
			settle(events)
			b.StartTimer()
			move()
			// run starts its cycle on the watch's notification.
			for m := range events {
				if m == c1.Name {
					break
				}
			}
			o := w.sync()
			if !o.Committed {
				b.Fatal("a moved endpoint did not commit")
			}
			for _, r := range o.Collected {
				if r.Reused == (r.Member == c1.Name) {
					b.Fatalf("%s: reused=%v; want only the changed member listed", r.Member, r.Reused)
				}
			}
		}
	})
}

// watchMembers runs the loop's member watch until the benchmark ends and
// returns its notifications, once they have settled.
func watchMembers(b *testing.B, w *world) chan string {
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan string, 1024)
	done := make(chan error, 1)
	go func() {
		done <- w.loop.Members.Watch(ctx, func(m string) {
			select {
			case events <- m:
			default:
			}
		})
	}()
	b.Cleanup(func() { cancel(); require.NoError(b, <-done) })
	time.Sleep(time.Second) // the informers' first lists
	settle(events)
	return events
}

// settle drops notifications until none came for 200 ms.
func settle(events chan string) {
	for {
		select {
		case <-events:
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

// benchLog is the loop's logger in a benchmark: silent, or JSON lines
// appended to $MCS_BENCH_LOG.
func benchLog(b *testing.B) *slog.Logger {
	path := os.Getenv("MCS_BENCH_LOG")
	if path == "" {
		return quietLog()
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(b, err)
	b.Cleanup(func() { _ = f.Close() })
	return slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// seedGenerated creates in member i what generated member i holds:
// namespaces, Services, their EndpointSlices and ServiceExports, less
// what a server assigns. It returns the namespaces, the same in every
// member.
func seedGenerated(b *testing.B, w *world, services int) []string {
	b.Helper()
	p := generate.Params{Members: len(w.members), Services: services, ExportersPerService: 2, EndpointsPerExporter: 10, Seed: 1}
	_, snaps := generate.ClusterSet(p)
	ctx := context.Background()
	var namespaces []string
	for _, ns := range snaps[0].Namespaces {
		namespaces = append(namespaces, ns.Name)
	}
	for i, m := range w.members {
		s := snaps[i]
		var objs []client.Object
		for _, svc := range s.Services {
			svc := svc.DeepCopy()
			if svc.Spec.ClusterIP != corev1.ClusterIPNone {
				svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
			}
			objs = append(objs, svc)
		}
		for _, es := range s.EndpointSlices {
			objs = append(objs, es.DeepCopy())
		}
		for _, se := range s.ServiceExports {
			se := se.DeepCopy()
			se.CreationTimestamp = metav1.Time{}
			objs = append(objs, se)
		}
		require.NoError(b, envtest.EnsureNamespaces(ctx, m.Client, namespaces...))
		createAll(b, m.Client, objs)
	}
	return namespaces
}

// createAll creates objs eight at a time.
func createAll(b *testing.B, c client.Client, objs []client.Object) {
	b.Helper()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, o := range objs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := c.Create(context.Background(), o); err != nil {
				b.Errorf("create %s/%s: %v", o.GetNamespace(), o.GetName(), err)
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// deleteApplied deletes from every member what mcs-gitops applied (or the
// floor loop did) in namespaces. Nothing runs there that would put a
// finalizer on them, so they are gone when the calls return.
func deleteApplied(b *testing.B, w *world, namespaces []string) {
	b.Helper()
	ctx := context.Background()
	sel := client.MatchingLabels{render.ManagedByLabel: render.ManagedByValue}
	var wg sync.WaitGroup
	for _, m := range w.members {
		wg.Go(func() {
			for _, ns := range namespaces {
				for _, obj := range []client.Object{&mcsv1alpha1.ServiceImport{}, &discoveryv1.EndpointSlice{}} {
					if err := m.Client.DeleteAllOf(ctx, obj, client.InNamespace(ns), sel); err != nil {
						b.Errorf("%s: delete %T in %s: %v", m.Name, obj, ns, err)
					}
				}
				// Services have no deletecollection: one by one.
				var svcs corev1.ServiceList
				if err := m.Client.List(ctx, &svcs, client.InNamespace(ns), sel); err != nil {
					b.Errorf("%s: list Services in %s: %v", m.Name, ns, err)
					continue
				}
				for _, s := range svcs.Items {
					if err := client.IgnoreNotFound(m.Client.Delete(ctx, &s)); err != nil {
						b.Errorf("%s: delete Service %s/%s: %v", m.Name, ns, s.Name, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}
