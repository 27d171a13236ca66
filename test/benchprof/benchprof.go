// SPDX-License-Identifier: Apache-2.0

// Package benchprof profiles the timed part of a benchmark alone. It is
// for benchmarks only; it measures nothing itself.
package benchprof

import (
	"os"
	"runtime/pprof"
	"testing"
)

// Loop writes a CPU profile of what runs until the returned func is
// called (a benchmark's timed loop, none of its setup, which dwarfs a
// few iterations) to $MCS_BENCH_CPUPROFILE when it is set.
func Loop(b *testing.B) func() {
	path := os.Getenv("MCS_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
