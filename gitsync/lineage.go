// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// RewrittenError is a remote branch that no longer descends from a commit
// this Repo accepted on it: someone force-pushed it, to an older commit or an
// unrelated one. Nothing is built on it: its inputs/ would stand in for
// members that cannot be read, and bring back or drop exports nobody
// changed.
type RewrittenError struct {
	Branch string
	// Was is the last commit accepted on the branch, Now what it holds:
	// zero when the branch is gone and this clone does not hold Was, so
	// it cannot push it back (a fresh clone of a remote recreated empty).
	Was, Now plumbing.Hash
}

func (e *RewrittenError) Error() string {
	if e.Now.IsZero() {
		return fmt.Sprintf("the remote branch %s is gone, and this clone does not hold %s, the last commit accepted there, to push it back; nothing is rendered or applied",
			e.Branch, e.Was.String()[:12])
	}
	return fmt.Sprintf("the remote branch %s was rewritten: it is at %s, which does not descend from %s, the last commit accepted there; nothing is rendered on it or applied from it",
		e.Branch, e.Now.String()[:12], e.Was.String()[:12])
}

// RequireDescent makes commit the line the remote branch must descend
// from: the last commit the loop pushed, as recorded outside this
// process (a restart, a CronJob's fresh clone). A clone that does not
// hold it has a branch that does not contain it: the next ResetToRemote
// refuses the branch with a *RewrittenError. Zero forgets the line: the
// branch is taken as it is.
func (r *Repo) RequireDescent(commit plumbing.Hash) {
	r.line = commit
}

// checkLine refuses a remote commit that does not descend from r.line,
// the last commit on the branch this Repo accepted (pushed, or fetched
// and verified, or RequireDescent).
func (r *Repo) checkLine(remote plumbing.Hash) error {
	if r.line.IsZero() || remote == r.line {
		return nil
	}
	ok, err := r.contains(remote, r.line)
	if err != nil {
		return err
	}
	if !ok {
		return &RewrittenError{Branch: r.opts.Branch, Was: r.line, Now: remote}
	}
	return nil
}

// contains reports whether commit tip has commit below among its
// ancestors (or is it). A clone without below's object does not: every
// fetch of the branch brings all of its history.
func (r *Repo) contains(tip, below plumbing.Hash) (bool, error) {
	if tip == below {
		return true, nil
	}
	now, err := r.repo.CommitObject(tip)
	if err != nil {
		return false, fmt.Errorf("reading commit %s: %w", tip.String()[:12], err)
	}
	was, err := r.repo.CommitObject(below)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading commit %s: %w", below.String()[:12], err)
	}
	ok, err := was.IsAncestor(now)
	if err != nil {
		return false, fmt.Errorf("is %s below %s: %w", below.String()[:12], tip.String()[:12], err)
	}
	return ok, nil
}

// branchGone handles a remote without the branch: the remote-tracking
// reference goes, so that the next Push sends HEAD again instead of
// believing the remote holds it. That needs HEAD to hold the line: a
// clone that does not (a fresh one) would start the branch anew, without
// the history that stands in for unreachable members and holds the
// ClusterSet IPs allocated so far, so it is refused.
func (r *Repo) branchGone() error {
	err := r.repo.Storer.RemoveReference(r.trackingRef())
	if err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return err
	}
	if !r.line.IsZero() {
		head, err := r.Head()
		if err != nil {
			return err
		}
		ok := false
		if !head.IsZero() {
			if ok, err = r.contains(head, r.line); err != nil {
				return err
			}
		}
		if !ok {
			return &RewrittenError{Branch: r.opts.Branch, Was: r.line}
		}
	}
	if !r.line.IsZero() {
		r.opts.Log.Warn("the remote has no branch any more (recreated empty?); the next push creates it again",
			"branch", r.opts.Branch, "url", r.redact.String(r.opts.URL), "last", r.line.String()[:12])
	}
	return nil
}

// ForeignCommit is a commit on the branch that the loop did not write.
type ForeignCommit struct {
	Hash            plumbing.Hash
	Author, Subject string
	// Message is the whole message; Merge says it has several parents.
	Message string
	Merge   bool
	// Paths it changed under the roots asked about.
	Paths []string
}

// Foreign lists the commits after from up to to (first parents, newest
// first) that this Repo's author did not write and that change a file
// under roots: what a person or another tool did to the rendered files.
func (r *Repo) Foreign(from, to plumbing.Hash, roots []string) ([]ForeignCommit, error) {
	var out []ForeignCommit
	for h := to; h != from && !h.IsZero(); {
		c, err := r.repo.CommitObject(h)
		if err != nil {
			return nil, err
		}
		var parent *object.Commit
		if c.NumParents() > 0 {
			if parent, err = c.Parent(0); err != nil {
				return nil, err
			}
		}
		if !r.Wrote(c) {
			paths, err := r.changedUnder(parent, c, roots)
			if err != nil {
				return nil, err
			}
			if len(paths) > 0 {
				subject, _, _ := strings.Cut(c.Message, "\n")
				out = append(out, ForeignCommit{Hash: c.Hash, Author: c.Author.Name, Subject: subject,
					Message: c.Message, Merge: c.NumParents() > 1, Paths: paths})
			}
		}
		if parent == nil {
			break
		}
		h = parent.Hash
	}
	return out, nil
}

// changedUnder lists the paths (relative to Options.Path) under roots that
// differ between parent (nil: none) and c.
func (r *Repo) changedUnder(parent, c *object.Commit, roots []string) ([]string, error) {
	var from map[string]plumbing.Hash
	if parent != nil {
		var err error
		if from, err = r.hashesUnder(parent.Hash, roots); err != nil {
			return nil, err
		}
	}
	to, err := r.hashesUnder(c.Hash, roots)
	if err != nil {
		return nil, err
	}
	var paths []string
	for p, h := range to {
		if from[p] != h {
			paths = append(paths, p)
		}
	}
	for p := range from {
		if _, ok := to[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths, nil
}

// hashesUnder is the blob hash of every file under roots at commit,
// keyed relative to Options.Path, read from its tree; headBlobs caches it
// for HEAD.
func (r *Repo) hashesUnder(commit plumbing.Hash, roots []string) (map[string]plumbing.Hash, error) {
	tree, err := r.commitTree(commit)
	if err != nil {
		return nil, err
	}
	have := map[string]plumbing.Hash{}
	for _, root := range roots {
		err := r.walk(tree, r.repoPath(root), func(name string, h plumbing.Hash, _ filemode.FileMode) error {
			have[name] = h
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", root, commit, err)
		}
	}
	return have, nil
}
