package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Changes lists the files a write touched, slash-separated and sorted.
type Changes struct {
	Written []string
	Removed []string
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool { return len(c.Written) == 0 && len(c.Removed) == 0 }

// plan compares the rendered files with what dir holds under roots.
func plan(dir string, files map[string][]byte, roots []string) (*Changes, error) {
	for p := range files {
		if !underRoots(p, roots) {
			return nil, fmt.Errorf("rendered file %s is outside the managed directories %v", p, roots)
		}
	}
	c := &Changes{}
	for p, want := range files {
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err != nil || !bytes.Equal(have, want) {
			c.Written = append(c.Written, p)
		}
	}
	existing, err := listFiles(dir, roots)
	if err != nil {
		return nil, err
	}
	for _, p := range existing {
		if _, ok := files[p]; !ok {
			c.Removed = append(c.Removed, p)
		}
	}
	sort.Strings(c.Written)
	sort.Strings(c.Removed)
	return c, nil
}

// WriteTree makes the roots (e.g. clusters/, status/) under dir hold exactly
// files: changed files are rewritten, identical ones left untouched (so
// mtimes and Git stay quiet), files nobody rendered are removed along with
// directories left empty. Anything outside roots is never touched.
func WriteTree(dir string, files map[string][]byte, roots []string) (*Changes, error) {
	c, err := plan(dir, files, roots)
	if err != nil {
		return nil, err
	}
	for _, p := range c.Written {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := writeAtomic(full, files[p]); err != nil {
			return nil, err
		}
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

// writeAtomic replaces a file via rename so a crash never leaves half a
// manifest for Flux or Argo CD to apply.
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
	c, err := plan(dir, files, roots)
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

func underRoots(p string, roots []string) bool {
	for _, r := range roots {
		if strings.HasPrefix(p, r+"/") {
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
