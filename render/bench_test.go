package render_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// benchWorld is one input the benchmarks run on; load generates or reads
// it, before any timer runs, and only for the sub-benchmarks selected.
type benchWorld struct {
	name string
	load func(b *testing.B) (*v1alpha1.ClusterSet, []*snapshot.Snapshot)
}

// benchWorlds are the demo ClusterSet and the specified scale (see
// generate.Target).
func benchWorlds() []benchWorld {
	p := generate.Target()
	return []benchWorld{
		{name: "demo", load: loadDemo},
		{
			name: fmt.Sprintf("target-%dx%dx%dx%d", p.Members, p.Services, p.ExportersPerService, p.EndpointsPerExporter),
			load: func(*testing.B) (*v1alpha1.ClusterSet, []*snapshot.Snapshot) { return generate.ClusterSet(p) },
		},
	}
}

func loadDemo(b *testing.B) (*v1alpha1.ClusterSet, []*snapshot.Snapshot) {
	b.Helper()
	cfg, err := v1alpha1.LoadFile(filepath.Join("..", "fixtures", "demo", "clusterset.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for _, m := range cfg.Spec.Members {
		names = append(names, m.Name)
	}
	snaps, err := snapshot.LoadDir(filepath.Join("..", "fixtures", "demo", "inputs"), names)
	if err != nil {
		b.Fatal(err)
	}
	return cfg, snaps
}

func countObjects(out *render.Output) int {
	n := 0
	for _, m := range out.Members {
		n += len(m.Objects)
	}
	return n
}

// BenchmarkRender times the KEP-1645 rules alone: snapshots in, objects out.
func BenchmarkRender(b *testing.B) {
	for _, w := range benchWorlds() {
		b.Run(w.name, func(b *testing.B) {
			cfg, snaps := w.load(b)
			out, err := render.Render(cfg, snaps)
			if err != nil {
				b.Fatal(err)
			}
			objects := countObjects(out)
			out = nil
			peak := startPeakMemory()
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n++
				if _, err := render.Render(cfg, snaps); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(objects*n)/b.Elapsed().Seconds(), "objects/s")
			peak.report(b)
		})
	}
}

// BenchmarkFiles times serialization: rendered objects to file bytes.
func BenchmarkFiles(b *testing.B) {
	for _, w := range benchWorlds() {
		b.Run(w.name, func(b *testing.B) {
			cfg, snaps := w.load(b)
			out, err := render.Render(cfg, snaps)
			if err != nil {
				b.Fatal(err)
			}
			objects := countObjects(out)
			peak := startPeakMemory()
			var size, n int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n++
				files, err := render.Files(out)
				if err != nil {
					b.Fatal(err)
				}
				size = 0
				for _, data := range files {
					size += len(data)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(objects*n)/b.Elapsed().Seconds(), "objects/s")
			b.ReportMetric(float64(size)/1e6, "MB/op")
			peak.report(b)
		})
	}
}

// peakMemory follows the high-water marks of one benchmark run: the Go heap
// (live and not yet collected objects, sampled every millisecond, which is
// well below the time one GC cycle takes here) and the process's resident
// set as the kernel counts it (VmHWM, reset at the start where the kernel
// allows, so it is exact rather than sampled). The same helper is in
// gitsync/bench_test.go; test files cannot share code across packages.
type peakMemory struct {
	stop     chan struct{}
	done     sync.WaitGroup
	heap     uint64
	rssReset bool
}

func startPeakMemory() *peakMemory {
	// Return what earlier benchmarks left behind, so the resident set
	// measured is this benchmark's.
	runtime.GC()
	debug.FreeOSMemory()
	p := &peakMemory{stop: make(chan struct{})}
	// Writing 5 to clear_refs resets VmHWM (Linux 4.0+).
	p.rssReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > p.heap {
			p.heap = v
		}
	}
	read()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return p
}

func (p *peakMemory) report(b *testing.B) {
	close(p.stop)
	p.done.Wait()
	b.ReportMetric(float64(p.heap)/(1<<20), "peak-heap-MiB")
	if !p.rssReset {
		return
	}
	if hwm, ok := vmHWM(); ok {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-rss-MiB")
	}
}

func vmHWM() (uint64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
