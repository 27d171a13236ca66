// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"errors"
	"fmt"
	"slices"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// CommitOn commits files (replacing what parent holds under roots) as the
// one child of parent on the local branch name, leaving Branch, the
// worktree and the index alone: review mode's proposal branches are
// written beside the branch the loop works on, never checked out. When
// the branch already holds a child of parent with that tree, it is kept
// and changed is false, so an unchanged proposal is not pushed again.
func (r *Repo) CommitOn(name string, parent plumbing.Hash, files map[string][]byte, roots []string, msg string) (plumbing.Hash, bool, error) {
	ref := plumbing.NewBranchReferenceName(name)
	if ref == r.branch {
		return plumbing.ZeroHash, false, fmt.Errorf("branch %s is the branch the loop commits to", name)
	}
	d, err := r.diffHead(parent, files, roots, nil)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if err := r.storeBlobs(files, d.changed, d.hashes); err != nil {
		return plumbing.ZeroHash, false, err
	}
	tree, err := r.buildTree(parent, d)
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("building the tree of %s: %w", name, err)
	}
	if cur, err := r.repo.Storer.Reference(ref); err == nil {
		if c, err := object.GetCommit(r.repo.Storer, cur.Hash()); err == nil &&
			c.TreeHash == tree && len(c.ParentHashes) == 1 && c.ParentHashes[0] == parent {
			return cur.Hash(), false, nil
		}
	}
	hash, err := r.storeCommit(parent, tree, msg)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(ref, hash)); err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("moving branch %s: %w", name, err)
	}
	r.opts.Log.Info("git commit", "commit", hash.String()[:12], "branch", name,
		"changed", len(d.changed), "removed", len(d.removed), "subject", subjectOf(msg))
	return hash, true, nil
}

// ErrBranchTaken is returned (wrapped) by PushBranch when origin's copy
// of the branch is a commit someone else made: it is not overwritten.
var ErrBranchTaken = errors.New("someone else pushed to the branch")

// PushBranch force-pushes the local branch name to origin, where review
// mode's proposal branches are rebuilt by the loop alone, unless origin
// has there a commit that neither this clone pushed nor owned recognizes
// as the loop's (a reviewer's edit, or a restarted loop's own commit):
// that returns ErrBranchTaken and leaves it. The check and the push are
// one lease: a commit pushed in between makes the push fail, not vanish.
func (r *Repo) PushBranch(ctx context.Context, name string, owned func(*object.Commit) bool) error {
	if !r.remote {
		return nil
	}
	if err := r.fenced(); err != nil {
		return err
	}
	ref := plumbing.NewBranchReferenceName(name)
	tracking := plumbing.NewRemoteReferenceName(remoteName, name)
	pushed := pushedRef(name)
	theirs, err := r.remoteRef(ctx, ref)
	if err != nil {
		return r.redact.Error(fmt.Errorf("pushing %s to %s: %w", name, r.redact.String(r.opts.URL), err))
	}
	opts := &git.PushOptions{
		RemoteName: remoteName,
		RefSpecs:   []config.RefSpec{config.RefSpec("+" + ref.String() + ":" + ref.String())},
		Auth:       r.opts.Auth,
		Force:      true,
	}
	if !theirs.IsZero() {
		if p, err := r.repo.Storer.Reference(pushed); err != nil || p.Hash() != theirs {
			// Not what this clone last pushed: whose is it? (The fetch
			// moves the tracking ref, which the lease needs, not pushed:
			// seeing a reviewer's commit is not having pushed it.)
			if _, _, err := r.fetchRef(ctx, ref, tracking); err != nil {
				return err
			}
			c, err := object.GetCommit(r.repo.Storer, theirs)
			if err != nil {
				return fmt.Errorf("branch %s on %s: %w", name, r.redact.String(r.opts.URL), err)
			}
			if !owned(c) {
				return fmt.Errorf("%s on %s is at %s by %s: %w", name, r.redact.String(r.opts.URL), theirs.String()[:12], c.Author.Name, ErrBranchTaken)
			}
		}
		opts.Force = false
		opts.ForceWithLease = &git.ForceWithLease{RefName: ref, Hash: theirs}
	}
	err = r.repo.PushContext(ctx, opts)
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
	case isRejected(err):
		return fmt.Errorf("pushing %s to %s: %w (%s)", name, r.redact.String(r.opts.URL), ErrPushRejected, r.redact.String(err.Error()))
	default:
		return r.redact.Error(fmt.Errorf("pushing %s to %s: %w", name, r.redact.String(r.opts.URL), err))
	}
	local, err := r.repo.Storer.Reference(ref)
	if err != nil {
		return fmt.Errorf("branch %s: %w", name, err)
	}
	for _, rf := range []plumbing.ReferenceName{tracking, pushed} {
		if err := r.repo.Storer.SetReference(plumbing.NewHashReference(rf, local.Hash())); err != nil {
			return fmt.Errorf("recording the pushed commit of %s: %w", name, err)
		}
	}
	r.opts.Log.Info("git push", "commit", local.Hash().String()[:12], "branch", name, "url", r.redact.String(r.opts.URL))
	return nil
}

// pushedRef records, in this clone only, the commit it last pushed to
// proposal branch name.
func pushedRef(name string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/mcs-gitops/pushed/" + name)
}

// remoteRef is the commit origin's branch ref is at, zero when origin
// has no such branch.
func (r *Repo) remoteRef(ctx context.Context, ref plumbing.ReferenceName) (plumbing.Hash, error) {
	remote, err := r.repo.Remote(remoteName)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: r.opts.Auth})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, rf := range refs {
		if rf.Name() == ref {
			return rf.Hash(), nil
		}
	}
	return plumbing.ZeroHash, nil
}

// Wrote says whether commit c has this repository's author: the loop's
// commits do, a person's do not.
func (r *Repo) Wrote(c *object.Commit) bool {
	return c.Author.Name == r.opts.Author.Name && c.Author.Email == r.opts.Author.Email
}

// DeleteBranch deletes the branch name locally and on origin. A branch
// that is already gone is not an error.
func (r *Repo) DeleteBranch(ctx context.Context, name string) error {
	ref := plumbing.NewBranchReferenceName(name)
	if ref == r.branch {
		return fmt.Errorf("branch %s is the branch the loop commits to", name)
	}
	for _, rf := range []plumbing.ReferenceName{ref, plumbing.NewRemoteReferenceName(remoteName, name), pushedRef(name)} {
		if err := r.repo.Storer.RemoveReference(rf); err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
			return fmt.Errorf("deleting branch %s: %w", name, err)
		}
	}
	if !r.remote {
		return nil
	}
	if err := r.fenced(); err != nil {
		return err
	}
	err := r.repo.PushContext(ctx, &git.PushOptions{
		RemoteName: remoteName,
		RefSpecs:   []config.RefSpec{config.RefSpec(":" + ref.String())},
		Auth:       r.opts.Auth,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return r.redact.Error(fmt.Errorf("deleting %s on %s: %w", name, r.redact.String(r.opts.URL), err))
	}
	return nil
}

// Overlap compares the local branch name, one commit on a parent, with
// onto: it returns the paths that commit changes which also changed
// between its parent and onto. None means a forge merges the branch into
// onto cleanly without rebuilding it there (the two sides touch different
// files); one or more means the merge may conflict. known is false when
// the branch is missing or is not one commit on a parent (a person pushed
// to it): only rebuilding it says what it would be.
func (r *Repo) Overlap(name string, onto plumbing.Hash) (paths []string, known bool, err error) {
	ref, err := r.repo.Storer.Reference(plumbing.NewBranchReferenceName(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("branch %s: %w", name, err)
	}
	c, err := object.GetCommit(r.repo.Storer, ref.Hash())
	if err != nil {
		return nil, false, fmt.Errorf("branch %s: %w", name, err)
	}
	if len(c.ParentHashes) != 1 {
		return nil, false, nil
	}
	parent := c.ParentHashes[0]
	if parent == onto {
		return nil, true, nil
	}
	ours, err := r.changedPaths(parent, c.Hash)
	if err != nil {
		return nil, false, fmt.Errorf("branch %s: %w", name, err)
	}
	theirs, err := r.changedPaths(parent, onto)
	if err != nil {
		return nil, false, fmt.Errorf("branch %s against %s: %w", name, onto, err)
	}
	for p := range ours {
		if theirs[p] {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths, true, nil
}

// changedPaths are the paths whose content differs between the trees of
// commits a and b; subtrees with the same hash are not walked.
func (r *Repo) changedPaths(a, b plumbing.Hash) (map[string]bool, error) {
	var trees [2]*object.Tree
	for i, h := range []plumbing.Hash{a, b} {
		c, err := object.GetCommit(r.repo.Storer, h)
		if err != nil {
			return nil, err
		}
		if trees[i], err = c.Tree(); err != nil {
			return nil, err
		}
	}
	changes, err := object.DiffTree(trees[0], trees[1])
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(changes))
	for _, ch := range changes {
		if ch.From.Name != "" {
			out[ch.From.Name] = true
		}
		if ch.To.Name != "" {
			out[ch.To.Name] = true
		}
	}
	return out, nil
}
