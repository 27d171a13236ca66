// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/test/gitea"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// BenchmarkReview measures review mode from the live loop (run, with
// minCommitInterval 0) on 3 real members and a real Gitea, each side by
// side with its floor in the same run (MCS_BENCH_REVIEW_N samples each,
// default 20):
//
//   - churn: an approved export's endpoint moves in cluster-1, until
//     cluster-2's imported slice holds the new address. review=on runs
//     with a structural change held in an open proposal the whole time
//     (pollInterval at its default, 30s), so every cycle splits the
//     world, and the proposal is rebased on the branch when the forge is
//     polled;
//     review=off is the floor, the same loop on the same kind of remote
//     without review mode. The figure is on/off.
//   - merge-to-applied: a proposal is merged through Gitea's API (as a
//     reviewer would) until its import exists in every member, with
//     pollInterval 1s: the poll is most of it.
func BenchmarkReview(b *testing.B) {
	n := 20
	if v := os.Getenv("MCS_BENCH_REVIEW_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("MCS_BENCH_REVIEW_N=%q: %v", v, err)
		}
	}
	sync := "    minCommitInterval: \"0\"\n"
	// The floor runs first: review=on reports its ratio to it.
	var off []time.Duration
	for _, review := range []bool{false, true} {
		b.Run(fmt.Sprintf("churn/review=%s", map[bool]string{false: "off", true: "on"}[review]), func(b *testing.B) {
			rw := newGiteaWorld(b, review, sync, "    pollInterval: 30s\n")
			prepareChurn(b, rw, review)
			runLoop(b, rw.world)
			var lat []time.Duration
			forgeIdle(b, rw)
			forge0, self0 := cpuTimes(b, rw)
			for b.Loop() {
				lat = churnLatencies(b, rw, n)
			}
			// Where the processor time of a sample goes: the forge (and
			// the git it runs) and this process (the loop).
			forge1, self1 := cpuTimes(b, rw)
			b.ReportMetric(ms(forge1-forge0)/float64(n*b.N), "forge-cpu-ms/sample")
			b.ReportMetric(ms(self1-self0)/float64(n*b.N), "loop-cpu-ms/sample")
			if !review {
				off = lat
				report(b, lat, nil)
				return
			}
			report(b, lat, off)
		})
	}
	b.Run("merge-to-applied", func(b *testing.B) {
		rw := newGiteaWorld(b, true, sync, "    pollInterval: 1s\n")
		rw.start()
		runLoop(b, rw.world)
		var lat []time.Duration
		for b.Loop() {
			lat = lat[:0]
			for i := range max(n/2, 1) {
				name := fmt.Sprintf("svc-%d-%d", i, time.Now().UnixNano()%1e6)
				export(b, rw.member("cluster-1"), "demo", name, 80, "10.1.1.1")
				number := rw.openPull(layout.ProposalBranch("service/demo/"+name), time.Minute)
				start := rw.mergeTimed(b, number)
				eventually(b, time.Minute, func() bool {
					for _, m := range rw.members {
						if !imported(m, "demo", name) {
							return false
						}
					}
					return true
				}, "%s not applied after its merge", name)
				lat = append(lat, time.Since(start))
			}
		}
		report(b, lat, nil)
	})
}

// prepareChurn gives cluster-1 an approved export demo/web, and with
// review on a second export, demo/held in cluster-3, whose proposal stays
// open.
func prepareChurn(b *testing.B, rw *reviewWorld, review bool) {
	rw.start()
	export(b, rw.member("cluster-1"), "demo", "web", 80, "10.1.0.1")
	rw.sync()
	if !review {
		// The floor has an open pull request into the branch too: Gitea
		// checks every open request's mergeability on each push to its
		// base, on the cores the loop and the members share, and that is
		// the forge's cost of having a request open, not review mode's.
		gitea.Push(b, rw.clone, rw.srv.Token, "main", "someone/else", map[string]string{"NOTES.md": "a person's change\n"})
		code, body := rw.srv.API(b, rw.srv.Token, http.MethodPost, fmt.Sprintf("repos/%s/fleet/pulls", gitea.AdminName),
			map[string]any{"head": "someone/else", "base": "main", "title": "a person's change"}, nil)
		require.Equal(b, http.StatusCreated, code, string(body))
		return
	}
	// Ask the forge on every cycle while setting up, so the merge is seen.
	poll := rw.loop.Review.Poll
	rw.loop.Review.Poll = 0
	defer func() { rw.loop.Review.Poll = poll }()
	rw.srv.Merge(b, rw.alice.Token, "fleet", rw.openPull(layout.ProposalBranch("service/demo/web"), time.Minute))
	export(b, rw.member("cluster-3"), "demo", "held", 80, "10.3.0.1")
	rw.sync()
	rw.sync()
	require.True(b, imported(rw.member("cluster-2"), "demo", "web"), "web approved")
	rw.openPull(layout.ProposalBranch("service/demo/held"), time.Minute)
}

// churnLatencies moves web's endpoint in cluster-1 n times and returns,
// sorted, how long each took to reach cluster-2's imported slice.
func churnLatencies(b *testing.B, rw *reviewWorld, n int) []time.Duration {
	ctx := context.Background()
	c1, c2 := rw.member("cluster-1"), rw.member("cluster-2")
	var lat []time.Duration
	for i := range n {
		addr := fmt.Sprintf("10.1.%d.%d", 10+i/200, 1+i%200)
		var sl discoveryv1.EndpointSlice
		require.NoError(b, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web-cluster-1"}, &sl))
		sl.Endpoints = tenant.Ready(addr)
		start := time.Now()
		require.NoError(b, c1.Client.Update(ctx, &sl))
		eventually(b, time.Minute, func() bool {
			return slices.Contains(importedAddresses(b, c2, "demo", "web"), addr)
		}, "%s did not reach cluster-2", addr)
		lat = append(lat, time.Since(start))
		// In MCS_BENCH_LOG, a sample is matched to the cycles that served it.
		rw.loop.Log.Debug("bench sample", "start", start, "latency_ms", ms(lat[len(lat)-1]))
	}
	slices.Sort(lat)
	return lat
}

// forgeIdle waits until Gitea has finished the work setting up left it
// (a merge, a new request: mergeability checks, diffs, indexing), so that
// neither side measures the other's leftovers: until it used less than
// 5 % of a core over a second, for at most 30 s.
func forgeIdle(b *testing.B, rw *reviewWorld) {
	deadline := time.Now().Add(30 * time.Second)
	last, _ := cpuTimes(b, rw)
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		now, _ := cpuTimes(b, rw)
		if now-last < 50*time.Millisecond {
			return
		}
		last = now
	}
	b.Logf("gitea was still busy after 30 s")
}

func cpuTimes(b *testing.B, rw *reviewWorld) (forge, self time.Duration) {
	forge, err := rw.srv.CPU()
	require.NoError(b, err)
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return forge, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report gives p50 and p99, and against a floor its p50 ratio.
func report(b *testing.B, lat, floor []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(ms(pct(lat, 50)), "p50-ms")
	b.ReportMetric(ms(pct(lat, 99)), "p99-ms")
	if len(floor) > 0 {
		b.ReportMetric(float64(pct(lat, 50))/float64(pct(floor, 50)), "p50/off")
	}
	b.ReportMetric(0, "ns/op")
}

// mergeTimed merges request number as alice and returns when the request
// that merged it was sent: Gitea refuses a merge until it has checked the
// request's mergeability, and the loop may pick the merge up before the
// retries return.
func (rw *reviewWorld) mergeTimed(b *testing.B, number int) time.Time {
	path := fmt.Sprintf("repos/%s/fleet/pulls/%d/merge", gitea.AdminName, number)
	deadline := time.Now().Add(30 * time.Second)
	for {
		start := time.Now()
		code, body := rw.srv.API(b, rw.alice.Token, http.MethodPost, path, map[string]any{"Do": "merge"}, nil)
		if code == http.StatusOK {
			return start
		}
		if time.Now().After(deadline) {
			b.Fatalf("merging #%d: %d %s", number, code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
