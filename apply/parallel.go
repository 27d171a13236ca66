// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// requestConcurrency bounds the requests one member's apply has in flight
// at once (collision reads, ssa dry-runs, status write-back).
const requestConcurrency = 8

// forEach runs fn for 0..n-1 with at most requestConcurrency at a time and
// returns every error joined in index order.
func forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(requestConcurrency)
	for i := range n {
		g.Go(func() error {
			errs[i] = fn(ctx, i)
			return nil // keep going: every object gets its chance
		})
	}
	_ = g.Wait()
	return errs
}

// collector appends to result lists from several goroutines.
type collector struct {
	mu sync.Mutex
}

func (c *collector) add(list *[]string, s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*list = append(*list, s)
}
