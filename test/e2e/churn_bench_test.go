// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/test/benchmem"
)

// BenchmarkChurn is a churn storm under run: 3 real members seeded with a
// generated world (MCS_BENCH_SERVICES services, default 300), and a
// stream of EndpointSlice updates (MCS_BENCH_CHURN_RATE a second, default
// 200, spread over the members) for MCS_BENCH_CHURN_SECONDS (default
// 60), with the default pacing (minCommitInterval 10 s); MCS_BENCH_QPS
// sets spec.sync.memberQPS. It reports the
// longest and the median cycle while the stream runs, the commits it made
// against the most pacing allows, the time from the stream's end until
// every member's last update is imported everywhere (converged-s), and
// the resident set at the end.
func BenchmarkChurn(b *testing.B) {
	services := envInt(b, "MCS_BENCH_SERVICES", 300)
	rate := envInt(b, "MCS_BENCH_CHURN_RATE", 200)
	seconds := envInt(b, "MCS_BENCH_CHURN_SECONDS", 60)
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(quietLog())
	extra := ""
	if v := os.Getenv("MCS_BENCH_QPS"); v != "" {
		extra = "    memberQPS: " + v + "\n"
	}
	w := newWorld(b, 3, extra)
	namespaces := seedGenerated(b, w, services)
	cycles := &cycleLog{next: benchLog(b).Handler()}
	w.loop.Log = slog.New(cycles)
	runLoop(b, w)
	ctx := context.Background()

	// Every exported slice of every member, as the stream's targets.
	type target struct {
		m     int
		slice discoveryv1.EndpointSlice
	}
	var targets []*target
	for i, m := range w.members {
		for _, ns := range namespaces {
			var list discoveryv1.EndpointSliceList
			require.NoError(b, m.Client.List(ctx, &list, client.InNamespace(ns),
				client.MatchingLabels{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}))
			for _, s := range list.Items {
				targets = append(targets, &target{m: i, slice: s})
			}
		}
	}
	require.NotEmpty(b, targets)
	// The first sync: every member imports every service.
	eventually(b, 5*time.Minute, func() bool { return cycles.count() > 0 && cycles.idleFor(2*time.Second) }, "the first sync did not settle")

	for b.Loop() {
		cycles.reset()
		start := time.Now()
		var sent atomic.Int64
		var wg sync.WaitGroup
		// One writer per member, each at a third of the rate.
		for i := range w.members {
			mine := slices.DeleteFunc(slices.Clone(targets), func(t *target) bool { return t.m != i })
			wg.Go(func() {
				tick := time.NewTicker(time.Second * time.Duration(len(w.members)) / time.Duration(rate))
				defer tick.Stop()
				n := 0
				for time.Since(start) < time.Duration(seconds)*time.Second {
					<-tick.C
					t := mine[n%len(mine)]
					n++
					t.slice.Endpoints[0].Addresses = []string{fmt.Sprintf("10.%d.%d.%d", 200+i, n/250%250, n%250+1)}
					if err := w.members[i].Client.Update(ctx, &t.slice); err != nil {
						b.Errorf("update %s/%s: %v", t.slice.Namespace, t.slice.Name, err)
						return
					}
					sent.Add(1)
				}
				// The member's last write: once it is imported everywhere,
				// a cycle has read every write before it.
				t := mine[0]
				t.slice.Endpoints[0].Addresses = []string{fmt.Sprintf("10.%d.255.254", 200+i)}
				if err := w.members[i].Client.Update(ctx, &t.slice); err != nil {
					b.Errorf("final update: %v", err)
				}
			})
		}
		wg.Wait()
		stopped := time.Now()
		eventually(b, 2*time.Minute, func() bool {
			for i := range w.members {
				marker := fmt.Sprintf("10.%d.255.254", 200+i)
				for _, m := range w.members {
					if !holdsAddress(ctx, m.Client, targets[0].slice.Namespace, w.members[i].Name, marker) {
						return false
					}
				}
			}
			return true
		}, "the last updates were not imported everywhere within 2 minutes")
		converged := time.Since(stopped)
		durations, commits := cycles.during(start, stopped)
		slices.Sort(durations)
		b.ReportMetric(float64(sent.Load())/stopped.Sub(start).Seconds(), "updates/s")
		if len(durations) > 0 {
			b.ReportMetric(float64(durations[len(durations)-1].Milliseconds()), "max-cycle-ms")
			b.ReportMetric(float64(durations[len(durations)/2].Milliseconds()), "p50-cycle-ms")
		}
		b.ReportMetric(float64(commits), "commits")
		b.ReportMetric(float64(seconds)/10+1, "commits-allowed")
		b.ReportMetric(converged.Seconds(), "converged-s")
		if rss, ok := benchmem.RSS(); ok {
			b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		}
	}
}

// holdsAddress reports whether member c holds an imported slice from
// source whose endpoints include addr.
func holdsAddress(ctx context.Context, c client.Client, ns, source, addr string) bool {
	var list discoveryv1.EndpointSliceList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{mcsv1alpha1.LabelSourceCluster: source}); err != nil {
		return false
	}
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if slices.Contains(e.Addresses, addr) {
				return true
			}
		}
	}
	return false
}

// cycleLog is a slog handler that keeps when each cycle ended, how long
// it took and whether it committed.
type cycleLog struct {
	// next gets every record too (benchLog: MCS_BENCH_LOG).
	next   slog.Handler
	mu     sync.Mutex
	cycles []cycleRecord
}

type cycleRecord struct {
	end       time.Time
	took      time.Duration
	committed bool
}

func (c *cycleLog) Enabled(context.Context, slog.Level) bool { return true }
func (c *cycleLog) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *cycleLog) WithGroup(string) slog.Handler            { return c }

// The loop logs through its logger only; attributes it adds with With
// are left out of what next gets, which the figures here do not need.

func (c *cycleLog) Handle(ctx context.Context, r slog.Record) error {
	if c.next.Enabled(ctx, r.Level) {
		_ = c.next.Handle(ctx, r)
	}
	if r.Message != "cycle done" {
		return nil
	}
	rec := cycleRecord{end: r.Time}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "duration":
			if d, err := time.ParseDuration(a.Value.String()); err == nil {
				rec.took = d
			}
		case "committed":
			rec.committed = a.Value.Bool()
		}
		return true
	})
	c.mu.Lock()
	c.cycles = append(c.cycles, rec)
	c.mu.Unlock()
	return nil
}

func (c *cycleLog) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cycles)
}

func (c *cycleLog) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cycles = nil
}

// idleFor reports whether no cycle ended in the last d.
func (c *cycleLog) idleFor(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cycles) > 0 && time.Since(c.cycles[len(c.cycles)-1].end) > d
}

// during are the durations of the cycles that ended between from and to,
// and how many of them committed.
func (c *cycleLog) during(from, to time.Time) ([]time.Duration, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	commits := 0
	for _, r := range c.cycles {
		if r.end.Before(from) || r.end.After(to) {
			continue
		}
		out = append(out, r.took)
		if r.committed {
			commits++
		}
	}
	return out, commits
}
