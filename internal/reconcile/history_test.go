// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
)

// TestOneEndpointCommitIsSmall: at 3 members x 300 services (2 exporters
// each, 10 endpoints per exporter) one endpoint moving makes a commit of
// a few KB as a pack (git pack-objects of what it adds), where one
// snapshot file per member made it about 24 KB, 20 KB of which were that
// member's 437 KB snapshot rewritten whole. The bound leaves room for
// zlib; the figure is logged.
func TestOneEndpointCommitIsSmall(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git for pack-objects")
	}
	p := generate.Params{Members: 3, Services: 300, ExportersPerService: 2, EndpointsPerExporter: 10, Seed: 1}
	cfg, snaps := generate.ClusterSet(p)
	l := benchLoop(t, cfg)
	results := readResults(snaps)
	ctx := context.Background()
	first, err := l.publish(ctx, results)
	require.NoError(t, err)
	second, err := l.publish(ctx, moveOneEndpoint(t, results))
	require.NoError(t, err)
	require.True(t, second.changed)
	n := packBytes(t, l.Repo.Dir(), second.commit, first.commit)
	t.Logf("one endpoint moved: %d bytes pushed (objects of the commit, packed)", n)
	require.Less(t, n, 8<<10)
}

// packBytes is the size of a pack of the objects reachable from commit
// and not from base, as git pack-objects makes it (with flags).
func packBytes(t testing.TB, dir string, commit, base plumbing.Hash, flags ...string) int {
	t.Helper()
	list := exec.Command("git", "rev-list", "--objects", commit.String(), "^"+base.String())
	list.Dir = dir
	objects, err := list.Output()
	require.NoError(t, err)
	pack := exec.Command("git", append([]string{"pack-objects", "--stdout"}, flags...)...)
	pack.Dir = dir
	pack.Stdin = strings.NewReader(string(objects))
	var out bytes.Buffer
	pack.Stdout = &out
	require.NoError(t, pack.Run())
	return out.Len()
}

// BenchmarkHistory makes 100 one-endpoint commits at 3 members x 300
// services, each moving an endpoint to a new address, and reports what
// the history costs per commit: the pack each push sends (as
// TestOneEndpointCommitIsSmall measures one), and the 100 commits packed
// together with deltas, as git gc keeps them (gc-bytes/commit; with
// --aggressive's window and depth in aggressive-bytes/commit). Needs git.
func BenchmarkHistory(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("needs git")
	}
	const commits = 100
	for b.Loop() {
		p := generate.Params{Members: 3, Services: 300, ExportersPerService: 2, EndpointsPerExporter: 10, Seed: 1}
		cfg, snaps := generate.ClusterSet(p)
		l := benchLoop(b, cfg)
		results := readResults(snaps)
		ctx := context.Background()
		first, err := l.publish(ctx, results)
		require.NoError(b, err)
		pushed := 0
		last := first.commit
		for i := range commits {
			moved := moveEndpointTo(b, results, fmt.Sprintf("10.254.%d.%d", i/250, i%250+1))
			pub, err := l.publish(ctx, moved)
			require.NoError(b, err)
			require.True(b, pub.changed)
			pushed += packBytes(b, l.Repo.Dir(), pub.commit, last)
			last = pub.commit
		}
		gc := packBytes(b, l.Repo.Dir(), last, first.commit)
		aggressive := packBytes(b, l.Repo.Dir(), last, first.commit, "--window=250", "--depth=250")
		b.ReportMetric(float64(pushed)/commits, "pushed-bytes/commit")
		b.ReportMetric(float64(gc)/commits, "gc-bytes/commit")
		b.ReportMetric(float64(aggressive)/commits, "aggressive-bytes/commit")
	}
}

// moveEndpointTo is moveOneEndpoint to a given IPv4 address.
func moveEndpointTo(b testing.TB, results []clusters.Result, addr string) []clusters.Result {
	b.Helper()
	out := moveOneEndpoint(b, results)
	for i, r := range out {
		if r.Snapshot != results[i].Snapshot {
			s := *r.Snapshot
			es := s.EndpointSlices[0].DeepCopy()
			es.Endpoints[0].Addresses = []string{addr}
			s.EndpointSlices = append([]discoveryv1.EndpointSlice{*es}, s.EndpointSlices[1:]...)
			out[i].Snapshot = &s
		}
	}
	return out
}
