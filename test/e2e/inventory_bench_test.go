// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// BenchmarkInventoryChange measures, under `mcs-gitops run`, how long a
// change of the cluster inventory takes to reach a member: a profile's
// label flips in and out of a service's reach (spec.reach by profile
// labels), and the time is taken until the member holds, or no longer
// holds, the ServiceImport. That is the inventory poll (every 5 s), a
// reload (every member reconnected, credentials from the exec plugin)
// and one cycle. Reported: change-p50-ms and change-max-ms, and the
// floor in the same run: from an export to the same member's import with
// its IP (export-p50-ms: watch, debounce, one cycle). The changes are
// spread over the poll's period, so that a change caught by the poll
// rather than the watch would show.
func BenchmarkInventoryChange(b *testing.B) {
	const samples = 10
	f := newInventoryFleet(b, 3, `  reach:
    namespaces:
    - name: shop
      services:
      - name: cart
        importers: {matchLabels: {region: eu}}
  sync:
    debounce: 50ms
    minCommitInterval: "0"
`)
	ctx := context.Background()
	exporter, flipped, other := f.members[0], f.members[1], f.members[2]
	f.join(exporter, map[string]string{"region": "eu"})
	f.join(flipped, map[string]string{"region": "us"})
	f.join(other, map[string]string{"region": "us"})
	for _, m := range f.members {
		require.NoError(b, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	}
	export(b, exporter, "shop", "cart", 80, "10.1.0.10")
	f.run()
	waitFor := func(name string, want bool) time.Time {
		deadline := time.Now().Add(60 * time.Second)
		for importedIPs(flipped, name) != want {
			if time.Now().After(deadline) {
				b.Fatalf("%s: import of shop/%s still %v after 60 s", flipped.Name, name, !want)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Now()
	}
	export(b, other, "shop", "warm-up", 80, "10.3.0.10")
	waitFor("warm-up", true)
	var changes, floor []time.Duration
	n := 0
	// A change lands at any point of the poll's period, not just after a
	// reload (when the last sample ended and the ticker started anew):
	// a seeded random wait spreads them over it, the same in every run.
	phase := rand.New(rand.NewPCG(1, 2))
	region := []string{"us", "eu"}
	b.ResetTimer()
	for b.Loop() {
		for range samples {
			start := time.Now()
			export(b, other, "shop", fmt.Sprintf("svc-%d", n), 80, "10.3.0.10")
			floor = append(floor, waitFor(fmt.Sprintf("svc-%d", n), true).Sub(start))
			n++
			in := n%2 == 1
			time.Sleep(time.Duration(phase.IntN(5000)) * time.Millisecond)
			start = time.Now()
			f.label(flipped, map[string]string{"region": region[n%2]})
			changes = append(changes, waitFor("cart", in).Sub(start))
		}
	}
	slices.Sort(changes)
	slices.Sort(floor)
	b.ReportMetric(float64(changes[len(changes)/2].Microseconds())/1000, "change-p50-ms")
	b.ReportMetric(float64(changes[len(changes)-1].Microseconds())/1000, "change-max-ms")
	b.ReportMetric(float64(floor[len(floor)/2].Microseconds())/1000, "export-p50-ms")
	b.ReportMetric(0, "ns/op")
}
