// SPDX-License-Identifier: Apache-2.0

// Package benchmem measures the peak memory of a benchmark: the Go heap,
// sampled every millisecond, and the process's resident set as the kernel
// counts it. It exists so benchmarks in different packages share one
// measurement instead of each carrying a copy.
package benchmem

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Peak follows the high-water marks of one benchmark run: the Go heap
// (live and not yet collected objects, sampled every millisecond, which is
// well below the time one GC cycle takes here) and the process's resident
// set as the kernel counts it (VmHWM, reset at the start where the kernel
// allows, so it is exact rather than sampled).
type Peak struct {
	stop     chan struct{}
	done     sync.WaitGroup
	heap     uint64
	rssReset bool
}

// Start begins sampling; call Report when the measured work is done.
func Start() *Peak {
	// Return what earlier benchmarks left behind, so the resident set
	// measured is this benchmark's.
	runtime.GC()
	debug.FreeOSMemory()
	p := &Peak{stop: make(chan struct{})}
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

// Report stops sampling and reports peak-heap-MiB and, where the kernel
// allows, peak-rss-MiB.
func (p *Peak) Report(b *testing.B) {
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

// Live is the heap still reachable: what a full collection leaves.
func Live() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// RSS is the process's resident set now, as the kernel counts it.
func RSS() (uint64, bool) { return procStatus("VmRSS:") }

func vmHWM() (uint64, bool) { return procStatus("VmHWM:") }

func procStatus(field string) (uint64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
