package render_test

import (
	"fmt"
	"github.com/mcs-gitops/mcs-gitops/test/benchmem"
	"path/filepath"
	"testing"

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
			out, err := render.Render(cfg, snaps, nil)
			if err != nil {
				b.Fatal(err)
			}
			objects := countObjects(out)
			out = nil
			peak := benchmem.Start()
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n++
				if _, err := render.Render(cfg, snaps, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(objects*n)/b.Elapsed().Seconds(), "objects/s")
			peak.Report(b)
		})
	}
}

// BenchmarkFiles times serialization: rendered objects to file bytes.
func BenchmarkFiles(b *testing.B) {
	for _, w := range benchWorlds() {
		b.Run(w.name, func(b *testing.B) {
			cfg, snaps := w.load(b)
			out, err := render.Render(cfg, snaps, nil)
			if err != nil {
				b.Fatal(err)
			}
			objects := countObjects(out)
			peak := benchmem.Start()
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
			peak.Report(b)
		})
	}
}
