// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcs-gitops/mcs-gitops/internal/nofollow"
)

// Changes lists the files a write touched, slash-separated and sorted.
type Changes struct {
	Written []string
	Removed []string
	// Added are the written paths that had no regular file on disk (each
	// is also in Written; the rest differed), as DiffTree and WriteTree
	// find them. Repo.Changes, which compares with a commit, leaves it nil.
	Added []string
	// Unsafe are entries under the roots that were symbolic links, named
	// pipes, sockets or devices. None is ever read or written through:
	// WriteTree deletes each (the link, never its target) and DiffTree
	// shows it as a removal. Each is also in Written or Removed.
	Unsafe []string
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool { return len(c.Written) == 0 && len(c.Removed) == 0 }

// IOError is a failure to read or write the tree on disk (a full disk,
// permissions), as opposed to bad input. WriteTree returns one only after
// undoing what it had staged, so the tree is as it was.
type IOError struct{ Err error }

func (e *IOError) Error() string { return e.Err.Error() }
func (e *IOError) Unwrap() error { return e.Err }

// treePlan is what a write would do to dir.
type treePlan struct {
	Changes
	missing map[string]bool // rendered paths with no regular file on disk
	unsafe  map[string]bool // Changes.Unsafe, as a set
	blocked []string        // existing entries where a rendered path needs a directory
}

// plan compares the rendered files with what dir holds under roots. Reading
// 80k small files dominates, so it fans out over a few goroutines. No
// entry under a root is followed: the walk lists symbolic links and special
// files as unsafe, and a rendered path below one is read as missing.
func plan(dir string, files map[string][]byte, roots []string) (*treePlan, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		if !underRoots(p, roots) {
			return nil, fmt.Errorf("rendered file %s is outside the managed directories %v", p, roots)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	existing, unsafe, err := listFiles(dir, roots)
	if err != nil {
		return nil, &IOError{err}
	}
	// A rendered path needs each of its parents to be a directory; an
	// existing file or link there is in the way (blocked) and the paths
	// below it are missing. Only the parents are put in a map, not the
	// tens of thousands of files.
	parents := map[string]bool{}
	for _, p := range paths {
		for d := parentOf(p); d != "" && !parents[d]; d = parentOf(d) {
			parents[d] = true
		}
	}
	pl := &treePlan{missing: map[string]bool{}, unsafe: make(map[string]bool, len(unsafe))}
	for _, p := range unsafe {
		pl.unsafe[p] = true
	}
	blocked := map[string]bool{}
	for _, list := range [][]string{existing, unsafe} {
		for _, p := range list {
			if parents[p] {
				blocked[p] = true
			}
		}
	}
	below := func(p string) bool {
		if len(blocked) == 0 {
			return false
		}
		for d := parentOf(p); d != ""; d = parentOf(d) {
			if blocked[d] {
				return true
			}
		}
		return false
	}
	// Per path: 0 identical, 1 differs, 2 missing.
	state := make([]uint8, len(paths))
	for i, p := range paths {
		if pl.unsafe[p] || below(p) {
			state[i] = 2
		}
	}
	err = forEach(len(paths), func(i int) error {
		if state[i] != 0 {
			return nil
		}
		have, err := nofollow.ReadFile(filepath.Join(dir, filepath.FromSlash(paths[i])))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			state[i] = 2
		case err != nil:
			return err
		case !bytes.Equal(have, files[paths[i]]):
			state[i] = 1
		}
		return nil
	})
	if err != nil {
		return nil, &IOError{err}
	}
	for i, p := range paths {
		if state[i] != 0 {
			pl.Written = append(pl.Written, p)
		}
		if state[i] == 2 {
			pl.missing[p] = true
			pl.Added = append(pl.Added, p)
		}
	}
	for _, list := range [][]string{existing, unsafe} {
		for _, p := range list {
			if _, ok := files[p]; !ok {
				pl.Removed = append(pl.Removed, p)
			}
		}
	}
	sort.Strings(pl.Removed)
	pl.Unsafe = unsafe
	for p := range blocked {
		pl.blocked = append(pl.blocked, p)
	}
	sort.Strings(pl.blocked)
	return pl, nil
}

// parentOf is p's slash-separated parent, "" at the top.
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// ioWorkers bounds the goroutines doing file I/O: small-file reads and
// writes spend most of their time in syscalls, so a few more than the cores
// keeps them busy without flooding the disk.
func ioWorkers() int { return 2*runtime.GOMAXPROCS(0) + 2 }

// forEach runs fn for 0..n-1 on ioWorkers goroutines and returns the first
// error; the remaining work is skipped once one fails.
func forEach(n int, fn func(i int) error) error {
	var (
		next   atomic.Int64
		failed atomic.Bool
		once   sync.Once
		first  error
		wg     sync.WaitGroup
	)
	for range min(ioWorkers(), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// underRoots reports whether p is one of roots (a root may name a single
// file such as clusterset.yaml) or lies under one.
func underRoots(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// listFiles walks the roots without following anything: regular files go
// to files, and symbolic links (a root itself included) and special files
// to unsafe; both sorted, slash-separated, relative to dir.
func listFiles(dir string, roots []string) (files, unsafe []string, err error) {
	seen := map[string]bool{}
	for _, r := range roots {
		// A root such as inputs/a.yaml has parents that must be real too.
		if bad, _, err := nofollow.NotADirectory(dir, parentOf(r)); err != nil {
			return nil, nil, err
		} else if bad != "" {
			if !seen[bad] {
				seen[bad] = true
				unsafe = append(unsafe, bad)
			}
			continue
		}
		base := filepath.Join(dir, r)
		st, err := os.Lstat(base)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			if st.Mode().IsRegular() {
				files = append(files, r)
			} else {
				unsafe = append(unsafe, r)
			}
			continue
		}
		// WalkDir follows only its root, which was just found to be a real
		// directory; below it, a link is an entry like any other.
		err = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				files = append(files, filepath.ToSlash(rel))
			} else {
				unsafe = append(unsafe, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Strings(files)
	sort.Strings(unsafe)
	return files, unsafe, nil
}
