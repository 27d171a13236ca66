// SPDX-License-Identifier: Apache-2.0

package gitsync_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/test/benchmem"
)

// BenchmarkHistory is what a year of commits does to a commit and its
// push: a branch already holding N commits of one-file changes (N from
// MCS_BENCH_HISTORY, default 1000,10000; a loop committing once per
// 10 s minCommitInterval around the clock makes 3.2 million a year, a
// busy fleet's real rate is what changes: say 100,000 a year), each op
// one changed file committed and pushed to the bare remote. "commits-1"
// is the fresh repository the others are compared with. The history is
// written by git fast-import and cloned by git, neither timed.
func BenchmarkHistory(b *testing.B) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		b.Skip("needs git")
	}
	cfg, snaps := generate.ClusterSet(generate.Params{Members: 3, Services: 300, ExportersPerService: 2, EndpointsPerExporter: 10, Seed: 1})
	files := renderFiles(b, cfg, snaps)
	paths := slices.Sorted(maps.Keys(files))
	for _, n := range historySizes(b) {
		b.Run(fmt.Sprintf("commits-%d", n), func(b *testing.B) {
			base := benchDir(b)
			bare := filepath.Join(base, "remote.git")
			writeHistory(b, gitBin, bare, files, paths, n)
			clone := filepath.Join(base, "clone")
			if out, err := exec.Command(gitBin, "clone", "-q", bare, clone).CombinedOutput(); err != nil {
				b.Fatalf("git clone: %v: %s", err, out)
			}
			r, err := gitsync.Open(context.Background(), gitsync.Options{URL: bare, Workdir: clone,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			cur := maps.Clone(files)
			var commit, push time.Duration
			peak := benchmem.Start()
			i := 0
			for b.Loop() {
				i++
				next := maps.Clone(cur)
				p := paths[i%len(paths)]
				next[p] = append(slices.Clone(files[p]), fmt.Sprintf("# op %d\n", i)...)
				t0 := time.Now()
				if _, changed, err := r.Commit(next, roots, gitsync.StaticMessage("one")); err != nil || !changed {
					b.Fatalf("commit: changed=%v err=%v", changed, err)
				}
				t1 := time.Now()
				if err := r.Push(context.Background()); err != nil {
					b.Fatal(err)
				}
				commit, push = commit+t1.Sub(t0), push+time.Since(t1)
				cur = next
			}
			b.ReportMetric(float64(commit.Microseconds())/float64(i)/1000, "commit-ms/op")
			b.ReportMetric(float64(push.Microseconds())/float64(i)/1000, "push-ms/op")
			peak.Report(b)
		})
	}
}

func historySizes(b *testing.B) []int {
	spec := os.Getenv("MCS_BENCH_HISTORY")
	if spec == "" {
		spec = "1000,10000"
	}
	out := []int{1}
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("MCS_BENCH_HISTORY=%q: want commit counts, e.g. 1000,10000,100000", spec)
		}
		out = append(out, n)
	}
	return out
}

// writeHistory makes bare a repository whose main branch has n commits:
// the first holds files, each next one changes one of them (in turn), and
// the last holds files again.
func writeHistory(b *testing.B, gitBin, bare string, files map[string][]byte, paths []string, n int) {
	b.Helper()
	if out, err := exec.Command(gitBin, "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	cmd := exec.Command(gitBin, "-C", bare, "fast-import", "--quiet")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(in)
	when := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC).Unix()
	for c := 1; c <= n; c++ {
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter mcs-gitops <mcs-gitops@example.invalid> %d +0000\n", when+int64(c)*10)
		msg := fmt.Sprintf("update snapshot %d\n", c)
		fmt.Fprintf(w, "data %d\n%s", len(msg), msg)
		switch {
		case c == 1:
			for _, p := range paths {
				fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", p, len(files[p]), files[p])
			}
		case c == n:
			p := paths[(c-2)%len(paths)]
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", p, len(files[p]), files[p])
		default:
			p := paths[(c-1)%len(paths)]
			data := append(slices.Clone(files[p]), fmt.Sprintf("# commit %d\n", c)...)
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", p, len(data), data)
			if c > 2 {
				prev := paths[(c-2)%len(paths)]
				fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", prev, len(files[prev]), files[prev])
			}
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("git fast-import: %v: %s", err, out)
	}
	if n > 1 {
		if out, err := exec.Command(gitBin, "-C", bare, "repack", "-adq").CombinedOutput(); err != nil {
			b.Fatalf("git repack: %v: %s", err, out)
		}
	}
}
