// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/mcs-gitops/mcs-gitops/internal/nofollow"
)

// headDiff is what files change relative to the HEAD commit, decided by
// blob hashes; paths are relative to Options.Path.
type headDiff struct {
	head    plumbing.Hash
	changed []string // new or different content, sorted
	removed []string // in HEAD under the roots, not rendered, sorted
	hashes  map[string]plumbing.Hash
}

func (d *headDiff) empty() bool { return len(d.changed) == 0 && len(d.removed) == 0 }

// Changes says what Commit would change relative to the HEAD commit: the
// rendered files whose blob differs from (or is missing in) HEAD, and the
// files HEAD holds under roots that were not rendered. Nothing is written;
// the worktree is not consulted.
func (r *Repo) Changes(files map[string][]byte, roots []string) (*Changes, error) {
	head, err := r.Head()
	if err != nil {
		return nil, err
	}
	d, err := r.diffHead(head, files, roots, nil)
	if err != nil {
		return nil, err
	}
	return &Changes{Written: d.changed, Removed: d.removed}, nil
}

func (r *Repo) diffHead(head plumbing.Hash, files map[string][]byte, roots []string, hint *expectation) (*headDiff, error) {
	base := r.committed
	// The same map again may have been modified since: compared with
	// itself it would say nothing changed.
	if head.IsZero() || base.files == nil || base.commit != head || !slices.Equal(base.roots, roots) || sameMap(files, base.files) {
		return r.diffAll(head, files, roots)
	}
	// files against the files head was committed from: only a path whose
	// bytes are another slice can differ, and only one they lack is gone.
	if hint != nil && sameMap(hint.since, base.files) {
		return r.diffExpected(head, files, roots, base, hint.paths)
	}
	var candidates []string
	found := 0
	for p, b := range files {
		old, ok := base.files[p]
		if ok {
			found++
			if sameSlice(old, b) {
				continue
			}
		}
		if err := checkManaged(p, roots); err != nil {
			return nil, err
		}
		candidates = append(candidates, p)
	}
	d, err := r.diffPaths(head, files, candidates, roots)
	if err != nil {
		return nil, err
	}
	if found < len(base.files) {
		for p := range base.files {
			if _, ok := files[p]; !ok {
				d.removed = append(d.removed, p)
			}
		}
		sort.Strings(d.removed)
	}
	return d, nil
}

// diffExpected is diffHead when the caller says at which paths files may
// differ from base's (ExpectChanges): only those are compared.
func (r *Repo) diffExpected(head plumbing.Hash, files map[string][]byte, roots []string, base committedFiles, paths []string) (*headDiff, error) {
	var candidates, removed []string
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		b, ok := files[p]
		if !ok {
			if _, had := base.files[p]; had {
				removed = append(removed, p)
			}
			continue
		}
		if old, had := base.files[p]; had && sameSlice(old, b) {
			continue
		}
		if err := checkManaged(p, roots); err != nil {
			return nil, err
		}
		candidates = append(candidates, p)
	}
	d, err := r.diffPaths(head, files, candidates, roots)
	if err != nil {
		return nil, err
	}
	sort.Strings(removed)
	d.removed = removed
	return d, nil
}

// expectation is what ExpectChanges said about the next Commit's files.
type expectation struct {
	since map[string][]byte
	paths []string
}

// ExpectChanges tells the next Commit (only that one) that its files
// differ from the map since only at paths (set, changed or removed there;
// the same byte slices everywhere else). When since is the map the last
// Commit was given and HEAD is still what that Commit left, only these
// paths are compared: a change then costs its paths, not a pass over
// every file (half a million at 100 members x 1,000 services). Anything
// else (another map, HEAD moved) compares as usual.
func (r *Repo) ExpectChanges(since map[string][]byte, paths []string) {
	r.expected = &expectation{since: since, paths: paths}
}

func (r *Repo) takeExpected() *expectation {
	e := r.expected
	r.expected = nil
	return e
}

func sameMap(a, b map[string][]byte) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// diffAll compares every one of files with head's tree.
func (r *Repo) diffAll(head plumbing.Hash, files map[string][]byte, roots []string) (*headDiff, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		if err := checkManaged(p, roots); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	d, err := r.diffPaths(head, files, paths, roots)
	if err != nil {
		return nil, err
	}
	have, err := r.headBlobs(head, roots)
	if err != nil {
		return nil, err
	}
	for p := range have {
		if _, ok := files[p]; !ok {
			d.removed = append(d.removed, p)
		}
	}
	sort.Strings(d.removed)
	return d, nil
}

// diffPaths is the diff of paths of files against head: those whose blob
// differs, or head lacks. It says nothing about removed paths.
func (r *Repo) diffPaths(head plumbing.Hash, files map[string][]byte, paths []string, roots []string) (*headDiff, error) {
	sums := hashAll(files, paths)
	have, err := r.headBlobs(head, roots)
	if err != nil {
		return nil, err
	}
	d := &headDiff{head: head, hashes: make(map[string]plumbing.Hash, len(paths))}
	for i, p := range paths {
		if h, ok := have[p]; !ok || h != sums[i] {
			d.changed = append(d.changed, p)
			d.hashes[p] = sums[i]
		}
	}
	sort.Strings(d.changed)
	return d, nil
}

// committedFiles are the files (map and bytes, which nobody modifies) a
// Commit found commit to hold under roots, or committed as it.
type committedFiles struct {
	commit plumbing.Hash
	roots  []string
	files  map[string][]byte
}

// checkManaged refuses a rendered file outside roots.
func checkManaged(p string, roots []string) error {
	if !underRoots(p, roots) {
		return fmt.Errorf("rendered file %s is outside the managed paths %v", p, roots)
	}
	return nil
}

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Message writes a commit's message from what it changes.
type Message func(*Changes) string

// StaticMessage is a Message that does not depend on the change.
func StaticMessage(msg string) Message { return func(*Changes) string { return msg } }

// Commit makes roots under Dir() hold exactly files and commits the result
// (the bytes of files must not be modified afterwards: the next Commit
// compares its files with them by slice, see diffHead)
// on Branch when any blob differs from the HEAD commit; msg is called once,
// with that difference, only when there is one. The index is left for
// SyncIndex to bring up to date; author and committer are Options.Author
// at Options.Clock(). When nothing changed it returns the current head and
// changed=false without committing.
//
// The difference is computed once, from blob hashes of files against the
// HEAD tree (cached between commits), never from the worktree status, which
// costs a walk of every file; the message, the worktree write and the
// commit all use it. The worktree write touches only the changed and
// removed paths when the worktree is known to hold HEAD (Commit wrote it);
// the first Commit after Open or ResetToRemote writes the whole tree like
// WriteTree, deleting whatever a checkout left there (links included).
func (r *Repo) Commit(files map[string][]byte, roots []string, msg Message) (plumbing.Hash, bool, error) {
	hint := r.takeExpected()
	head, err := r.Head()
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if r.opts.Path != "" {
		// The sub-path comes from the config, but the repository's content
		// could have turned it into a link out of the worktree.
		if err := nofollow.CheckDir(r.root, r.opts.Path); err != nil {
			return head, false, fmt.Errorf("path %s in the repository: %w", r.opts.Path, err)
		}
	}
	d, err := r.diffHead(head, files, roots, hint)
	if err != nil {
		return head, false, err
	}
	if err := r.writeWorktree(head, files, roots, d); err != nil {
		return head, false, err
	}
	if d.empty() {
		r.mirrored = head
		r.committed = committedFiles{commit: head, roots: slices.Clone(roots), files: files}
		return head, false, nil
	}
	message := msg(&Changes{Written: d.changed, Removed: d.removed})
	if err := r.storeBlobs(files, d.changed, d.hashes); err != nil {
		return head, false, err
	}
	tree, err := r.buildTree(head, d)
	if err != nil {
		return head, false, fmt.Errorf("building the commit tree: %w", err)
	}
	hash, err := r.storeCommit(head, tree, message)
	if err != nil {
		return head, false, err
	}
	var old *plumbing.Reference
	if !head.IsZero() {
		old = plumbing.NewHashReference(r.branch, head)
	}
	if err := r.repo.Storer.CheckAndSetReference(plumbing.NewHashReference(r.branch, hash), old); err != nil {
		return head, false, fmt.Errorf("moving branch %s to %s: %w", r.opts.Branch, hash, err)
	}
	r.cache.advance(hash, d, roots)
	r.mirrored = hash
	r.committed = committedFiles{commit: hash, roots: slices.Clone(roots), files: files}
	r.unstaged.add(d)
	r.opts.Log.Info("git commit", "commit", hash.String()[:12], "branch", r.opts.Branch,
		"changed", len(d.changed), "removed", len(d.removed), "subject", subjectOf(message))
	return hash, true, nil
}

// writeWorktree makes the worktree hold files under roots: only d's paths
// when it is known to hold head, else all of them. Until the caller knows
// the commit landed, the worktree is not known to hold anything.
func (r *Repo) writeWorktree(head plumbing.Hash, files map[string][]byte, roots []string, d *headDiff) error {
	var (
		written *Changes
		err     error
	)
	if !head.IsZero() && r.mirrored == head && slices.Equal(r.mirroredRoots, roots) {
		written, err = writeChanges(r.Dir(), files, d.changed, d.removed)
	} else {
		written, err = WriteTree(r.Dir(), files, roots)
	}
	r.mirrored = plumbing.ZeroHash
	if err != nil {
		return fmt.Errorf("writing the rendered tree into %s: %w", r.Dir(), err)
	}
	for _, p := range written.Unsafe {
		r.opts.Log.Warn("deleted a symbolic link or special file from the rendered tree; it was not followed", "path", p)
	}
	r.mirroredRoots = slices.Clone(roots)
	return nil
}

func (r *Repo) storeBlobs(files map[string][]byte, paths []string, hashes map[string]plumbing.Hash) error {
	s := r.repo.Storer
	done := map[plumbing.Hash]bool{}
	for _, p := range paths {
		h := hashes[p]
		if done[h] {
			continue
		}
		done[h] = true
		if s.HasEncodedObject(h) == nil {
			continue
		}
		obj := s.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return err
		}
		if _, err := w.Write(files[p]); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		stored, err := s.SetEncodedObject(obj)
		if err != nil {
			return fmt.Errorf("storing %s: %w", p, err)
		}
		if stored != h {
			return fmt.Errorf("storing %s: object name %s, expected %s", p, stored, h)
		}
	}
	return nil
}

func (r *Repo) storeCommit(parent, tree plumbing.Hash, msg string) (plumbing.Hash, error) {
	if strings.TrimSpace(msg) == "" {
		msg = "mcs-gitops: update the rendered tree"
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	sig := object.Signature{Name: sanitizeSig(r.opts.Author.Name), Email: sanitizeSig(r.opts.Author.Email), When: r.opts.Clock()}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	if r.opts.Signer != nil {
		// Signed is the commit as encoded without a signature, as git
		// verify-commit rebuilds it.
		unsigned, err := encodeCommit(c.Encode)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		armored, err := r.opts.Signer.Sign(unsigned, sig.When)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		c.PGPSignature = string(armored)
	}
	obj := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("storing the commit: %w", err)
	}
	return h, nil
}

// sanitizeSig drops what git forbids in a name or email.
func sanitizeSig(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '<' || c == '>' || c == '\n' {
			return -1
		}
		return c
	}, s)
}

func subjectOf(msg string) string {
	s, _, _ := strings.Cut(msg, "\n")
	return s
}
