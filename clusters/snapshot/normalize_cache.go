// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"reflect"
	"sync"
)

// NormalizeCache remembers, per member, the last live snapshot
// snapshot.Normalize was given and what it returned. A member whose new
// snapshot is equal to that one (reflect.DeepEqual: about 1 ms at 1,000
// exported services, where formatting and parsing them back takes about
// 700 ms) gets the same bytes and parsed snapshot again. Normalize is a
// function of the snapshot alone, so the answer is the one it would give.
//
// What it returns is shared between calls: callers must not modify it.
// Safe for concurrent use.
type NormalizeCache struct {
	mu   sync.Mutex
	last map[string]normalized
}

type normalized struct {
	live   *Snapshot
	data   []byte
	parsed *Snapshot
}

// NewNormalizeCache returns an empty cache.
func NewNormalizeCache() *NormalizeCache {
	return &NormalizeCache{last: map[string]normalized{}}
}

// Normalize is snapshot.Normalize, remembered for s.Member. A nil cache
// remembers nothing. s must not be modified afterwards.
func (c *NormalizeCache) Normalize(s *Snapshot, file string) ([]byte, *Snapshot, error) {
	if c == nil {
		return Normalize(s, file)
	}
	c.mu.Lock()
	prev, ok := c.last[s.Member]
	c.mu.Unlock()
	if ok && reflect.DeepEqual(prev.live, s) {
		return prev.data, prev.parsed, nil
	}
	data, parsed, err := Normalize(s, file)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	c.last[s.Member] = normalized{live: s, data: data, parsed: parsed}
	c.mu.Unlock()
	return data, parsed, nil
}
