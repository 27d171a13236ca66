// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/nofollow"
)

// stagedSuffix marks a file written but not yet renamed into place. One
// left by a killed process is stale to the next plan and removed.
const stagedSuffix = ".tmp-mcs-gitops"

// WriteTree makes the roots (e.g. clusters/, status/) under dir hold exactly
// files: changed files are rewritten, identical ones left untouched (so
// mtimes and Git stay quiet), files nobody rendered are removed along with
// directories left empty. Anything outside roots is never touched.
//
// It is all or nothing as far as a disk allows: every changed file is first
// written beside its target and only when all of them are written are they
// renamed into place, so a full disk leaves the tree as it was (the staged
// files and directories this run created are removed) and returns an
// *IOError. Symbolic links and special files under the roots are deleted
// first, never written through.
func WriteTree(dir string, files map[string][]byte, roots []string) (*Changes, error) {
	pl, err := plan(dir, files, roots)
	if err != nil {
		return nil, err
	}
	return pl.write(dir, files)
}

// writeChanges is WriteTree for a caller that knows what differs: dir
// already holds files except for written (new or different) and removed.
// Nothing is read and nothing else is listed; only the written paths and
// their parents are checked, so a link or file standing where a written
// file or its directory goes is deleted, never followed, and a removed path
// below a link is not touched.
func writeChanges(dir string, files map[string][]byte, written, removed []string) (*Changes, error) {
	pl := &treePlan{Changes: Changes{Written: written}}
	// The first entry on the way to each parent directory that is not a
	// real directory, "" when there is none (a missing one is created).
	inTheWay := map[string]string{}
	onTheWay := func(p string) (string, error) {
		d := parentOf(p)
		if bad, ok := inTheWay[d]; ok {
			return bad, nil
		}
		bad, _, err := nofollow.NotADirectory(dir, d)
		if err != nil {
			return "", &IOError{err}
		}
		inTheWay[d] = bad
		return bad, nil
	}
	blocked := map[string]bool{}
	for _, p := range written {
		bad, err := onTheWay(p)
		if err != nil {
			return nil, err
		}
		if bad != "" {
			if !blocked[bad] {
				blocked[bad] = true
				pl.blocked = append(pl.blocked, bad)
			}
			continue
		}
		st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, &IOError{err}
		case !st.Mode().IsRegular():
			pl.Unsafe = append(pl.Unsafe, p)
		}
	}
	for _, p := range removed {
		bad, err := onTheWay(p)
		if err != nil {
			return nil, err
		}
		if bad == "" {
			pl.Removed = append(pl.Removed, p)
		}
	}
	return pl.write(dir, files)
}

// write carries out the plan: entries in the way deleted, changed files
// staged and renamed into place, stale files removed.
func (pl *treePlan) write(dir string, files map[string][]byte) (*Changes, error) {
	gone := map[string]bool{}
	for _, p := range append(append([]string{}, pl.Unsafe...), pl.blocked...) {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, &IOError{fmt.Errorf("remove %s: %w", p, err)}
		}
		gone[p] = true
	}
	if err := stage(dir, files, pl); err != nil {
		return nil, &IOError{err}
	}
	for _, p := range pl.Removed {
		if gone[p] {
			// Deleted above; a rendered directory may stand there now.
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, &IOError{fmt.Errorf("remove %s: %w", p, err)}
		}
		removeEmptyParents(dir, filepath.Dir(full))
	}
	return &pl.Changes, nil
}

// stage writes every changed file beside its target, then renames them all
// into place. A file in a directory this run created is written in place,
// which saves a rename per file on a first render: undoing the run removes
// that directory whole, and a run killed half way leaves at most a partial
// file in a directory that did not exist, which the next run rewrites (its
// bytes differ) and which nothing applies (apply reads commits). A failure
// before the renames undoes this run's writes.
func stage(dir string, files map[string][]byte, pl *treePlan) error {
	created, err := makeDirs(dir, pl.Written)
	fresh := map[string]bool{}
	for _, d := range created {
		fresh[d] = true
	}
	target := func(p string) (path string, staged bool) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if fresh[parentOf(p)] {
			return full, false
		}
		return full + stagedSuffix, true
	}
	undo := func() {
		for _, p := range pl.Written {
			if path, staged := target(p); staged {
				os.Remove(path)
			}
		}
		for i := len(created) - 1; i >= 0; i-- {
			os.RemoveAll(filepath.Join(dir, filepath.FromSlash(created[i])))
		}
	}
	if err != nil {
		undo()
		return err
	}
	err = forEach(len(pl.Written), func(i int) error {
		path, _ := target(pl.Written[i])
		return writeNew(path, files[pl.Written[i]])
	})
	if err != nil {
		undo()
		return err
	}
	// Renames need no new data blocks, so past this point a full disk no
	// longer fails the write.
	return forEach(len(pl.Written), func(i int) error {
		path, staged := target(pl.Written[i])
		if !staged {
			return nil
		}
		return os.Rename(path, strings.TrimSuffix(path, stagedSuffix))
	})
}

// makeDirs creates the parent directories of paths, each once, and returns
// the ones it created (slash-separated, relative to dir), parents before
// children.
func makeDirs(dir string, paths []string) ([]string, error) {
	need := map[string]bool{}
	for _, p := range paths {
		for d := parentOf(p); d != "" && !need[d]; d = parentOf(d) {
			need[d] = true
		}
	}
	sorted := make([]string, 0, len(need))
	for d := range need {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted) // a parent sorts before its children
	var created []string
	if len(paths) > 0 {
		// dir itself (--out, or the repository's sub-path) is the caller's.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	for _, d := range sorted {
		full := filepath.Join(dir, filepath.FromSlash(d))
		err := os.Mkdir(full, 0o755)
		switch {
		case err == nil:
			created = append(created, d)
		case errors.Is(err, fs.ErrExist):
			// plan removed every link and file in the way, so what exists
			// here is a real directory; Lstat proves it before writing below.
			st, lerr := os.Lstat(full)
			if lerr != nil {
				return created, lerr
			}
			if !st.IsDir() {
				return created, fmt.Errorf("%s is not a directory", d)
			}
		default:
			return created, err
		}
	}
	return created, nil
}

// writeNew creates path exclusively (a leftover from a killed run is
// removed first) and never through a link.
func writeNew(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
