// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// unstaged are the paths commits changed or removed since the index was
// last written. Commit does not write the index: encoding it is most of a
// commit's cost at scale (0.14 s at 80,000 entries) and nothing the loop
// does reads it, so SyncIndex writes it when the loop is idle, and
// ResetToRemote before go-git's reset reads it.
type unstaged struct {
	changed map[string]plumbing.Hash
	removed map[string]bool
}

func (u *unstaged) add(d *headDiff) {
	if u.changed == nil {
		u.changed, u.removed = map[string]plumbing.Hash{}, map[string]bool{}
	}
	for _, p := range d.changed {
		u.changed[p] = d.hashes[p]
		delete(u.removed, p)
	}
	for _, p := range d.removed {
		u.removed[p] = true
		delete(u.changed, p)
	}
}

func (u *unstaged) empty() bool { return len(u.changed) == 0 && len(u.removed) == 0 }

// SyncIndex brings the index in line with the last commit: the entries
// of the paths commits changed or removed since it was last written, and
// nothing else, so `git status` in the worktree (and go-git's own reset)
// see a clean tree without rehashing every file. A person's staged change
// to another path stays staged. Nothing to do costs nothing.
func (r *Repo) SyncIndex() error {
	if r.unstaged.empty() {
		return nil
	}
	if err := r.stage(&r.unstaged); err != nil {
		return fmt.Errorf("updating the index of %s: %w", r.root, err)
	}
	r.unstaged = unstaged{}
	return nil
}

func (r *Repo) stage(u *unstaged) error {
	idx, err := r.index()
	if err != nil {
		return err
	}
	drop := make(map[string]bool, len(u.removed)+len(u.changed))
	for p := range u.removed {
		drop[r.repoPath(p)] = true
	}
	for p := range u.changed {
		drop[r.repoPath(p)] = true
	}
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if !drop[e.Name] {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
	for p, h := range u.changed {
		e, err := r.indexEntry(r.repoPath(p), h)
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
	r.indexCache = indexCache{}
	if err := r.repo.Storer.SetIndex(idx); err != nil {
		return err
	}
	if fi, err := r.indexFile(); err == nil {
		r.indexCache = indexCache{idx: idx, size: fi.Size(), mod: fi.ModTime()}
	}
	return nil
}

// indexCache is the index this Repo last wrote, decoded, with the index
// file's size and modification time right after the write. While the file
// still shows them, stage starts from it rather than decoding the file
// again: 0.2 s a commit at 100,000 entries. Anything else that writes the
// index (a reset, a checkout, git in a shell) changes them.
type indexCache struct {
	idx  *index.Index
	size int64
	mod  time.Time
}

// index is the repository's index, from indexCache when it still holds.
func (r *Repo) index() (*index.Index, error) {
	if c := r.indexCache; c.idx != nil {
		if fi, err := r.indexFile(); err == nil && fi.Size() == c.size && fi.ModTime().Equal(c.mod) {
			return c.idx, nil
		}
	}
	r.indexCache = indexCache{}
	return r.repo.Storer.Index()
}

// indexFile stats the index file of a repository stored on disk.
func (r *Repo) indexFile() (os.FileInfo, error) {
	fs, ok := r.repo.Storer.(*filesystem.Storage)
	if !ok {
		return nil, os.ErrNotExist
	}
	return os.Stat(filepath.Join(fs.Filesystem().Root(), "index"))
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
