// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"crypto/sha1"
	"maps"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// headCache remembers the path -> blob hash map of one commit under one
// set of roots. Commit advances it to the new commit with the changes it
// made, so a steady loop reads the HEAD tree once.
type headCache struct {
	commit plumbing.Hash
	roots  []string
	blobs  map[string]plumbing.Hash
}

func (c *headCache) advance(commit plumbing.Hash, d *headDiff, roots []string) {
	if d.head.IsZero() {
		// The first commit holds exactly what it changed.
		*c = headCache{commit: commit, roots: slices.Clone(roots), blobs: maps.Clone(d.hashes)}
		return
	}
	if c.blobs == nil || c.commit != d.head || !slices.Equal(c.roots, roots) {
		*c = headCache{}
		return
	}
	for _, p := range d.removed {
		delete(c.blobs, p)
	}
	for _, p := range d.changed {
		c.blobs[p] = d.hashes[p]
	}
	c.commit = commit
}

// headBlobs returns the blob hash of every file under roots at head,
// keyed relative to Options.Path. The map is shared with the cache:
// callers must not modify it.
func (r *Repo) headBlobs(head plumbing.Hash, roots []string) (map[string]plumbing.Hash, error) {
	if head.IsZero() {
		return map[string]plumbing.Hash{}, nil
	}
	if r.cache.blobs != nil && r.cache.commit == head && slices.Equal(r.cache.roots, roots) {
		return r.cache.blobs, nil
	}
	have, err := r.hashesUnder(head, roots)
	if err != nil {
		return nil, err
	}
	r.cache = headCache{commit: head, roots: slices.Clone(roots), blobs: have}
	return have, nil
}

// hashAll computes the Git blob hash of each path's content. The renderer
// shares one byte slice between identical files, so each distinct slice
// is hashed once; the rest run in parallel. (A slice that did not change
// since the last Commit is not among the paths at all: diffHead compares
// with the files that Commit got.)
func hashAll(files map[string][]byte, paths []string) []plumbing.Hash {
	type key struct {
		p *byte
		n int
	}
	first := make(map[key]int, len(paths))
	owner := make([]int, len(paths))
	for i, p := range paths {
		owner[i] = i
		if data := files[p]; len(data) > 0 {
			k := key{&data[0], len(data)}
			if j, ok := first[k]; ok {
				owner[i] = j
			} else {
				first[k] = i
			}
		}
	}
	sums := make([]plumbing.Hash, len(paths))
	_ = forEach(len(paths), func(i int) error {
		if owner[i] == i {
			sums[i] = blobHash(files[paths[i]])
		}
		return nil
	})
	for i, j := range owner {
		if j != i {
			sums[i] = sums[j]
		}
	}
	return sums
}

// blobHash is Git's object name of a blob: SHA-1 of "blob <size>\0" and
// the content. It uses the standard library's SHA-1 (assembly, several
// times faster than go-git's collision-detecting one); the content is
// our own rendering, and the stored object's name is checked by go-git
// when it is written.
func blobHash(data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write([]byte("blob "))
	h.Write(strconv.AppendInt(nil, int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}
