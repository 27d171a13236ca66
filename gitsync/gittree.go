// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// dirEdit is the set of changes to one directory of a Git tree: files set
// to a blob (or removed, zero hash) and subdirectories with changes.
type dirEdit struct {
	files map[string]plumbing.Hash
	dirs  map[string]*dirEdit
}

func newDirEdit() *dirEdit {
	return &dirEdit{files: map[string]plumbing.Hash{}, dirs: map[string]*dirEdit{}}
}

func (d *dirEdit) set(repoPath string, h plumbing.Hash) {
	parts := strings.Split(repoPath, "/")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := d.dirs[p]
		if !ok {
			sub = newDirEdit()
			d.dirs[p] = sub
		}
		d = sub
	}
	d.files[parts[len(parts)-1]] = h
}

// buildTree writes the tree of head with d applied and returns its hash.
// Untouched subtrees are reused by hash, so the cost follows the number
// of changed directories, not the size of the tree.
func (r *Repo) buildTree(head plumbing.Hash, d *headDiff) (plumbing.Hash, error) {
	root := newDirEdit()
	for _, p := range d.changed {
		root.set(r.repoPath(p), d.hashes[p])
	}
	for _, p := range d.removed {
		root.set(r.repoPath(p), plumbing.ZeroHash)
	}
	var base plumbing.Hash
	if !head.IsZero() {
		c, err := object.GetCommit(r.repo.Storer, head)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		base = c.TreeHash
	}
	h, _, err := r.editTree(base, root)
	return h, err
}

// editTree applies e to the tree base (zero: an empty tree) and returns
// the new tree's hash and how many entries it has.
func (r *Repo) editTree(base plumbing.Hash, e *dirEdit) (plumbing.Hash, int, error) {
	entries := map[string]object.TreeEntry{}
	if !base.IsZero() {
		t, err := object.GetTree(r.repo.Storer, base)
		if err != nil {
			return plumbing.ZeroHash, 0, err
		}
		for _, te := range t.Entries {
			entries[te.Name] = te
		}
	}
	for name, h := range e.files {
		if h.IsZero() {
			delete(entries, name)
			continue
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
	}
	for name, sub := range e.dirs {
		var subBase plumbing.Hash
		if te, ok := entries[name]; ok && te.Mode == filemode.Dir {
			subBase = te.Hash
		}
		h, n, err := r.editTree(subBase, sub)
		if err != nil {
			return plumbing.ZeroHash, 0, err
		}
		if n == 0 {
			delete(entries, name)
			continue
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	}
	t := &object.Tree{Entries: make([]object.TreeEntry, 0, len(entries))}
	for _, te := range entries {
		t.Entries = append(t.Entries, te)
	}
	// Git orders entries by name, a directory's name as if it ended in "/".
	key := func(te object.TreeEntry) string {
		if te.Mode == filemode.Dir {
			return te.Name + "/"
		}
		return te.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	obj := r.repo.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, 0, err
	}
	h := obj.Hash()
	if r.repo.Storer.HasEncodedObject(h) != nil {
		if _, err := r.repo.Storer.SetEncodedObject(obj); err != nil {
			return plumbing.ZeroHash, 0, err
		}
	}
	return h, len(t.Entries), nil
}
