// SPDX-License-Identifier: Apache-2.0

package gitsync_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/test/benchmem"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

var roots = []string{layout.ClustersDir, layout.StatusDir}

// benchDir is where the benchmarks write: a temporary directory under
// $MCS_BENCH_DIR when set, else under the default temporary directory.
// Creating tens of thousands of files costs what the filesystem makes it
// cost, so pointing this at a tmpfs (MCS_BENCH_DIR=/dev/shm) separates
// the writer's own cost from the disk's.
func benchDir(b *testing.B) string {
	b.Helper()
	parent := os.Getenv("MCS_BENCH_DIR")
	if parent == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "mcs-gitops-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func renderFiles(b testing.TB, cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot) map[string][]byte {
	out, err := render.Render(cfg, snaps, nil)
	if err != nil {
		b.Fatal(err)
	}
	files, err := layout.Files(out)
	if err != nil {
		b.Fatal(err)
	}
	return files
}

// BenchmarkRenderAndWrite is a first render of the whole ClusterSet into an
// empty repository: Render, Files and WriteTree, each timed on its own too.
func BenchmarkRenderAndWrite(b *testing.B) {
	for _, w := range generate.Worlds() {
		b.Run(w.Name, func(b *testing.B) {
			cfg, snaps, err := w.Load()
			if err != nil {
				b.Fatal(err)
			}
			base := benchDir(b)
			var renderT, filesT, writeT time.Duration
			var size, objects, n int
			peak := benchmem.Start()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				dir, err := os.MkdirTemp(base, "repo")
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()

				t0 := time.Now()
				out, err := render.Render(cfg, snaps, nil)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				files, err := layout.Files(out)
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				changes, err := gitsync.WriteTree(dir, files, roots)
				if err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()

				b.StopTimer()
				renderT += t1.Sub(t0)
				filesT += t2.Sub(t1)
				writeT += t3.Sub(t2)
				n++
				objects = 0
				for _, m := range out.Members {
					objects += len(m.Objects)
				}
				if len(changes.Written) != len(files) || len(changes.Removed) != 0 {
					b.Fatalf("empty repository: wrote %d of %d files, removed %d", len(changes.Written), len(files), len(changes.Removed))
				}
				size = 0
				for _, data := range files {
					size += len(data)
				}
				// Removing tens of thousands of files is not part of a render,
				// and neither is the kernel writing back the last iteration's
				// files; sync keeps that writeback out of the next iteration.
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				_ = exec.Command("sync").Run()
				b.StartTimer()
			}
			b.StopTimer()
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(n) }
			b.ReportMetric(ms(renderT), "render-ms/op")
			b.ReportMetric(ms(filesT), "files-ms/op")
			b.ReportMetric(ms(writeT), "write-ms/op")
			b.ReportMetric(float64(objects*n)/b.Elapsed().Seconds(), "objects/s")
			b.ReportMetric(float64(size)/1e6, "MB-written/op")
			peak.Report(b)
		})
	}
}

// BenchmarkRewriteUnchanged is the steady state of the sync loop: the world
// has not changed since the last render, so nothing may be written.
// "tree" times WriteTree alone on current files; "render+tree" the whole
// Render, Files, WriteTree pass.
func BenchmarkRewriteUnchanged(b *testing.B) {
	for _, w := range generate.Worlds() {
		b.Run(w.Name, func(b *testing.B) {
			cfg, snaps, err := w.Load()
			if err != nil {
				b.Fatal(err)
			}
			dir := benchDir(b)
			if _, err := gitsync.WriteTree(dir, renderFiles(b, cfg, snaps), roots); err != nil {
				b.Fatal(err)
			}
			// written fails the benchmark on any change and returns the bytes
			// written, which is reported so that it shows in the results.
			written := func(b *testing.B, files map[string][]byte, c *gitsync.Changes) int {
				if !c.Empty() {
					b.Fatalf("unchanged world: wrote %d files (%v...), removed %d", len(c.Written), first(c.Written), len(c.Removed))
				}
				n := 0
				for _, p := range c.Written {
					n += len(files[p])
				}
				return n
			}
			b.Run("tree", func(b *testing.B) {
				files := renderFiles(b, cfg, snaps)
				var size int
				peak := benchmem.Start()
				b.ResetTimer()
				for b.Loop() {
					c, err := gitsync.WriteTree(dir, files, roots)
					if err != nil {
						b.Fatal(err)
					}
					size = written(b, files, c)
				}
				b.StopTimer()
				b.ReportMetric(float64(size)/1e6, "MB-written/op")
				peak.Report(b)
			})
			b.Run("render+tree", func(b *testing.B) {
				var size int
				peak := benchmem.Start()
				b.ResetTimer()
				for b.Loop() {
					out, err := render.Render(cfg, snaps, nil)
					if err != nil {
						b.Fatal(err)
					}
					files, err := layout.Files(out)
					if err != nil {
						b.Fatal(err)
					}
					c, err := gitsync.WriteTree(dir, files, roots)
					if err != nil {
						b.Fatal(err)
					}
					size = written(b, files, c)
				}
				b.StopTimer()
				b.ReportMetric(float64(size)/1e6, "MB-written/op")
				peak.Report(b)
			})
		})
	}
}

func first(s []string) []string {
	return s[:min(len(s), 3)]
}

// BenchmarkCommit is gitsync.Commit on a clone of a bare remote holding
// the rendered world: "unchanged" is the steady state (decide by blob
// hashes against HEAD, no commit), "one-file" a commit of one changed
// status file, which stages one path and rewrites only the trees above
// it. "go-git-status" times Worktree.Status on the same tree, the cost
// the decision avoids.
func BenchmarkCommit(b *testing.B) {
	for _, w := range generate.Worlds() {
		b.Run(w.Name, func(b *testing.B) {
			cfg, snaps, err := w.Load()
			if err != nil {
				b.Fatal(err)
			}
			files := renderFiles(b, cfg, snaps)
			commitRoots := []string{layout.ClustersDir, layout.StatusDir}
			base := benchDir(b)
			bare := filepath.Join(base, "remote.git")
			if _, err := git.PlainInit(bare, true); err != nil {
				b.Fatal(err)
			}
			r, err := gitsync.Open(context.Background(), gitsync.Options{
				URL: bare, Workdir: filepath.Join(base, "clone"),
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if _, changed, err := r.Commit(files, commitRoots, gitsync.StaticMessage("first")); err != nil || !changed {
				b.Fatalf("first commit: changed=%v err=%v", changed, err)
			}
			first := time.Since(t0)
			t0 = time.Now()
			if err := r.Push(context.Background()); err != nil {
				b.Fatal(err)
			}
			push := time.Since(t0)

			b.Run("unchanged", func(b *testing.B) {
				peak := benchmem.Start()
				for b.Loop() {
					if _, changed, err := r.Commit(files, commitRoots, gitsync.StaticMessage("again")); err != nil || changed {
						b.Fatalf("unchanged world: changed=%v err=%v", changed, err)
					}
				}
				b.ReportMetric(float64(len(files)), "files")
				b.ReportMetric(float64(first.Milliseconds()), "first-commit-ms")
				b.ReportMetric(float64(push.Milliseconds()), "first-push-ms")
				peak.Report(b)
			})
			b.Run("one-file", func(b *testing.B) {
				var victim string
				for p := range files {
					if strings.HasPrefix(p, layout.StatusDir+"/") && p > victim {
						victim = p
					}
				}
				orig := files[victim]
				i := 0
				for b.Loop() {
					i++
					files[victim] = append(append([]byte{}, orig...), fmt.Sprintf("# %d\n", i)...)
					if _, changed, err := r.Commit(files, commitRoots, gitsync.StaticMessage("one")); err != nil || !changed {
						b.Fatalf("changed=%v err=%v", changed, err)
					}
				}
				files[victim] = orig
			})
			b.Run("go-git-status", func(b *testing.B) {
				repo, err := git.PlainOpen(filepath.Join(base, "clone"))
				if err != nil {
					b.Fatal(err)
				}
				wt, err := repo.Worktree()
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := wt.Status(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
