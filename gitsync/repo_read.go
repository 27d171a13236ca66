// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Dir is where the rendered tree lives on disk: the worktree root joined
// with Options.Path (the directory of clusterset.yaml).
func (r *Repo) Dir() string {
	return filepath.Join(r.root, filepath.FromSlash(r.opts.Path))
}

// Head returns the commit Branch points at, the zero hash when Branch has
// no commit yet.
func (r *Repo) Head() (plumbing.Hash, error) {
	ref, err := r.repo.Storer.Reference(r.branch)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading branch %s: %w", r.opts.Branch, err)
	}
	return ref.Hash(), nil
}

// ReadFile returns a file of commit ref; name is relative to Options.Path.
// A missing file, a symbolic link or a zero ref gives an error matching
// fs.ErrNotExist.
func (r *Repo) ReadFile(ref plumbing.Hash, name string) ([]byte, error) {
	notExist := &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	if ref.IsZero() {
		return nil, notExist
	}
	tree, err := r.commitTree(ref)
	if err != nil {
		return nil, err
	}
	f, err := tree.File(r.repoPath(name))
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, notExist
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", name, ref, err)
	}
	if f.Mode == filemode.Symlink {
		return nil, notExist
	}
	s, err := f.Contents()
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", name, ref, err)
	}
	return []byte(s), nil
}

// Files returns every file under Options.Path at commit ref, or only
// those under the given prefixes (directories such as "inputs" or single
// files such as "clusterset.yaml"), keyed by their path relative to
// Options.Path. A zero ref, or prefixes that do not exist, give an empty
// map.
func (r *Repo) Files(ref plumbing.Hash, prefixes ...string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if ref.IsZero() {
		return out, nil
	}
	tree, err := r.commitTree(ref)
	if err != nil {
		return nil, err
	}
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	for _, p := range prefixes {
		p = strings.Trim(path.Clean("/"+p), "/")
		err := r.walk(tree, r.repoPath(p), func(name string, hash plumbing.Hash, mode filemode.FileMode) error {
			if mode == filemode.Symlink {
				// A link's blob is its target's name, not content; the
				// renderer never commits one, and the next commit drops it.
				return nil
			}
			blob, err := object.GetBlob(r.repo.Storer, hash)
			if err != nil {
				return err
			}
			data, err := readBlob(blob)
			if err != nil {
				return err
			}
			out[name] = data
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", p, ref, err)
		}
	}
	return out, nil
}

func (r *Repo) commitTree(ref plumbing.Hash) (*object.Tree, error) {
	c, err := object.GetCommit(r.repo.Storer, ref)
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", ref, err)
	}
	t, err := object.GetTree(r.repo.Storer, c.TreeHash)
	if err != nil {
		return nil, fmt.Errorf("reading the tree of commit %s: %w", ref, err)
	}
	return t, nil
}

// walk calls fn for every file (regular, executable or symbolic link) at or
// under repo path p of tree, with its name relative to Options.Path. A
// missing p is no error.
func (r *Repo) walk(root *object.Tree, p string, fn func(name string, hash plumbing.Hash, mode filemode.FileMode) error) error {
	rel := func(full string) string {
		if r.opts.Path == "" {
			return full
		}
		return strings.TrimPrefix(strings.TrimPrefix(full, r.opts.Path), "/")
	}
	if p == "" || p == "." {
		return walkTree(r, root, "", func(full string, h plumbing.Hash, m filemode.FileMode) error { return fn(rel(full), h, m) })
	}
	e, err := root.FindEntry(p)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrFileNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if e.Mode != filemode.Dir {
		if e.Mode.IsFile() {
			return fn(rel(p), e.Hash, e.Mode)
		}
		return nil
	}
	sub, err := object.GetTree(r.repo.Storer, e.Hash)
	if err != nil {
		return err
	}
	return walkTree(r, sub, p, func(full string, h plumbing.Hash, m filemode.FileMode) error { return fn(rel(full), h, m) })
}

// walkTree visits the files of t recursively; prefix is t's path.
func walkTree(r *Repo, t *object.Tree, prefix string, fn func(full string, hash plumbing.Hash, mode filemode.FileMode) error) error {
	for _, e := range t.Entries {
		full := e.Name
		if prefix != "" {
			full = prefix + "/" + e.Name
		}
		switch {
		case e.Mode == filemode.Dir:
			sub, err := object.GetTree(r.repo.Storer, e.Hash)
			if err != nil {
				return fmt.Errorf("reading tree %s: %w", full, err)
			}
			if err := walkTree(r, sub, full, fn); err != nil {
				return err
			}
		case e.Mode.IsFile():
			if err := fn(full, e.Hash, e.Mode); err != nil {
				return err
			}
		}
	}
	return nil
}

func readBlob(b *object.Blob) ([]byte, error) {
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// Paths lists the files of commit ref under roots, sorted, relative to
// Options.Path. For the commit Commit last made or read it costs no read
// of the tree (the blob hashes are cached).
func (r *Repo) Paths(ref plumbing.Hash, roots []string) ([]string, error) {
	blobs, err := r.headBlobs(ref, roots)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(blobs)), nil
}
