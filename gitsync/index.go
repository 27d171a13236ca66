// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// stage brings the index in line with the commit just made, touching
// only the entries of changed and removed paths, so `git status` (and
// go-git's own reset) see a clean tree without rehashing every file.
func (r *Repo) stage(d *headDiff) error {
	idx, err := r.repo.Storer.Index()
	if err != nil {
		return err
	}
	drop := make(map[string]bool, len(d.removed)+len(d.changed))
	for _, p := range d.removed {
		drop[r.repoPath(p)] = true
	}
	for _, p := range d.changed {
		drop[r.repoPath(p)] = true
	}
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if !drop[e.Name] {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
	for _, p := range d.changed {
		e, err := r.indexEntry(r.repoPath(p), d.hashes[p])
		if err != nil {
			return err
		}
		idx.Entries = append(idx.Entries, e)
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	// The cached tree extension describes the old entries; git would
	// trust it and commit a stale tree.
	idx.Cache = nil
	idx.ResolveUndo = nil
	idx.EndOfIndexEntry = nil
	return r.repo.Storer.SetIndex(idx)
}

func (r *Repo) indexEntry(repoPath string, h plumbing.Hash) (*index.Entry, error) {
	fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(repoPath)))
	if err != nil {
		return nil, err
	}
	e := &index.Entry{
		Name:       repoPath,
		Hash:       h,
		Mode:       filemode.Regular,
		ModifiedAt: fi.ModTime(),
		Size:       uint32(fi.Size()),
	}
	fillStat(e, fi)
	return e, nil
}
