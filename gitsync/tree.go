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

	"github.com/pmezard/go-difflib/difflib"
)

// Changes lists the files a write touched, slash-separated and sorted.
type Changes struct {
	Written []string
	Removed []string
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool { return len(c.Written) == 0 && len(c.Removed) == 0 }

// plan compares the rendered files with what dir holds under roots. Reading
// 80k small files dominates, so it fans out over a few goroutines.
func plan(dir string, files map[string][]byte, roots []string) (*Changes, map[string]bool, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		if !underRoots(p, roots) {
			return nil, nil, fmt.Errorf("rendered file %s is outside the managed directories %v", p, roots)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// Per path: 0 identical, 1 differs, 2 missing.
	state := make([]uint8, len(paths))
	err := forEach(len(paths), func(i int) error {
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(paths[i])))
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
		return nil, nil, err
	}
	c := &Changes{}
	missing := map[string]bool{}
	for i, p := range paths {
		if state[i] != 0 {
			c.Written = append(c.Written, p)
		}
		if state[i] == 2 {
			missing[p] = true
		}
	}
	existing, err := listFiles(dir, roots)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range existing {
		if _, ok := files[p]; !ok {
			c.Removed = append(c.Removed, p)
		}
	}
	sort.Strings(c.Removed)
	return c, missing, nil
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

// WriteTree makes the roots (e.g. clusters/, status/) under dir hold exactly
// files: changed files are rewritten, identical ones left untouched (so
// mtimes and Git stay quiet), files nobody rendered are removed along with
// directories left empty. Anything outside roots is never touched.
func WriteTree(dir string, files map[string][]byte, roots []string) (*Changes, error) {
	c, missing, err := plan(dir, files, roots)
	if err != nil {
		return nil, err
	}
	// Directories first, once each, so the parallel writers never race on
	// MkdirAll of a shared parent.
	dirs := map[string]bool{}
	for _, p := range c.Written {
		if d := filepath.Dir(filepath.Join(dir, filepath.FromSlash(p))); !dirs[d] {
			dirs[d] = true
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
	}
	err = forEach(len(c.Written), func(i int) error {
		p := c.Written[i]
		full := filepath.Join(dir, filepath.FromSlash(p))
		if missing[p] {
			// A new file is written in place: if the process dies half way,
			// the next render sees the bytes differ and rewrites it, and
			// nothing commits or applies a tree that was not fully written.
			return os.WriteFile(full, files[p], 0o644)
		}
		return writeAtomic(full, files[p])
	})
	if err != nil {
		return nil, err
	}
	for _, p := range c.Removed {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		removeEmptyParents(dir, filepath.Dir(full))
	}
	return c, nil
}

// writeAtomic replaces an existing file via rename so a crash never leaves
// half a manifest where a whole one was, for Flux or Argo CD to apply.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp-mcs-gitops"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func removeEmptyParents(root, dir string) {
	root = filepath.Clean(root)
	for dir != root && strings.HasPrefix(dir, root) {
		if err := os.Remove(dir); err != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// DiffTree returns a unified diff from what dir holds to files, empty when
// the tree is current. Nothing is written.
func DiffTree(dir string, files map[string][]byte, roots []string) (string, *Changes, error) {
	c, _, err := plan(dir, files, roots)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	diff := func(p string, want []byte, exists bool) error {
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		from, to := "a/"+p, "b/"+p
		if len(have) == 0 && err != nil {
			from = "/dev/null"
		}
		if !exists {
			to = "/dev/null"
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(have)), B: difflib.SplitLines(string(want)),
			FromFile: from, ToFile: to, Context: 3,
		})
		b.WriteString(text)
		return err
	}
	for _, p := range c.Written {
		if err := diff(p, files[p], true); err != nil {
			return "", nil, err
		}
	}
	for _, p := range c.Removed {
		if err := diff(p, nil, false); err != nil {
			return "", nil, err
		}
	}
	return b.String(), c, nil
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

func listFiles(dir string, roots []string) ([]string, error) {
	var out []string
	for _, r := range roots {
		base := filepath.Join(dir, r)
		err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && path == base {
				return filepath.SkipDir
			}
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
			out = append(out, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
