// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"bytes"
	"sync"
)

// TailBuffer keeps the last Limit bytes written to it, for a failure
// message about a process: the processes write from their own goroutines
// while a failing test reads it.
type TailBuffer struct {
	Limit int

	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.Limit; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() == 0 {
		return "(no output captured)"
	}
	return b.buf.String()
}
