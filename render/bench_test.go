// SPDX-License-Identifier: Apache-2.0

package render_test

import (
	"testing"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/test/benchmem"

	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/render"
)

func countObjects(out *render.Output) int {
	n := 0
	for _, m := range out.Members {
		n += len(m.Objects)
	}
	return n
}

// BenchmarkRender times the KEP-1645 rules alone: snapshots in, objects out.
func BenchmarkRender(b *testing.B) {
	for _, w := range generate.Worlds() {
		b.Run(w.Name, func(b *testing.B) {
			cfg, snaps, err := w.Load()
			if err != nil {
				b.Fatal(err)
			}
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
	for _, w := range generate.Worlds() {
		b.Run(w.Name, func(b *testing.B) {
			cfg, snaps, err := w.Load()
			if err != nil {
				b.Fatal(err)
			}
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
				files, err := layout.Files(out)
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
