// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
)

// NormalizeCache remembers, per member, the last live snapshot
// snapshot.Normalize was given and what it returned, part by part (the
// parts of Format). A member whose new snapshot is equal to that one
// (reflect.DeepEqual: about 1 ms at 1,000 exported services, where
// formatting and parsing them back takes about 200 ms) gets the same
// bytes and parsed snapshot again. A member that changed is formatted
// and parsed again only in the parts whose objects changed: one endpoint
// moving costs one service's part. Normalize is a function of the
// snapshot alone, and each part's bytes a function of its objects alone,
// so the answer is the one it would give.
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
	parts  map[string]normalizedPart
}

// normalizedPart is one part: its objects as read, its bytes and those
// parsed back.
type normalizedPart struct {
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
	n, err := normalizeParts(s, file, prev.parts)
	if err != nil {
		// Normalize says what is wrong, in its words and lines.
		data, parsed, err := Normalize(s, file)
		if err != nil {
			return nil, nil, err
		}
		n = normalized{data: data, parsed: parsed}
	}
	if ok && bytes.Equal(n.data, prev.data) {
		// The same bytes keep the same slice and parse: what the loop
		// compares by identity (the render's inputs, Git's blob hashes, a
		// member's generation) stays equal.
		n.data, n.parsed = prev.data, prev.parsed
	}
	n.live = s
	c.mu.Lock()
	c.last[s.Member] = n
	c.mu.Unlock()
	return n.data, n.parsed, nil
}

// normalizeParts is Normalize part by part, taking from prev each part
// whose objects are equal.
func normalizeParts(s *Snapshot, file string, prev map[string]normalizedPart) (normalized, error) {
	c := *s
	c.sort()
	groups, err := byPart(&c)
	if err != nil {
		return normalized{}, err
	}
	names := partNames(groups)
	out := normalized{parts: make(map[string]normalizedPart, len(names)), parsed: &Snapshot{Member: s.Member}}
	size := 0
	for _, name := range names {
		g := groups[name]
		p, ok := prev[name]
		if !ok || !reflect.DeepEqual(p.live, g) {
			data, err := formatPart(name, g)
			if err != nil {
				return normalized{}, err
			}
			if ok && bytes.Equal(data, p.data) {
				// Read again with nothing that is formatted changed (a
				// status write, a resourceVersion): the same part.
				p.live = g
			} else {
				parsed, err := Parse(s.Member, file, data)
				if err != nil {
					return normalized{}, err
				}
				p = normalizedPart{live: g, data: data, parsed: parsed}
			}
		}
		out.parts[name] = p
		size += len(p.data)
	}
	// The parts joined are Format's bytes; their objects, sorted, are
	// what Parse of those bytes gives. The cluster part comes first, so
	// the line ClusterIDAt names is the same in it as in the whole.
	out.data = make([]byte, 0, size)
	n := out.parsed
	for _, name := range names {
		p := out.parts[name].parsed
		out.data = append(out.data, out.parts[name].data...)
		if name == ClusterPart {
			n.ClusterID, n.ClusterIDAt, n.GatewayAddresses = p.ClusterID, p.ClusterIDAt, p.GatewayAddresses
		}
		n.Namespaces = append(n.Namespaces, p.Namespaces...)
		n.ServiceCIDRs = append(n.ServiceCIDRs, p.ServiceCIDRs...)
		n.ServiceExports = append(n.ServiceExports, p.ServiceExports...)
		n.Services = append(n.Services, p.Services...)
		n.EndpointSlices = append(n.EndpointSlices, p.EndpointSlices...)
		n.GlobalTrafficPolicies = append(n.GlobalTrafficPolicies, p.GlobalTrafficPolicies...)
		n.Rejected = append(n.Rejected, p.Rejected...)
	}
	if n.empty() {
		return normalized{}, fmt.Errorf("empty") // Parse's error, worded by Normalize
	}
	n.sort()
	return out, nil
}
