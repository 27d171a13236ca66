// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitInfo is who made a commit, when, and its subject line.
type CommitInfo struct {
	Hash    string    `json:"commit"`
	Author  string    `json:"author"`
	When    time.Time `json:"when"`
	Subject string    `json:"subject"`
	// Parent is the commit's first parent, "" for a root commit.
	Parent string `json:"parent,omitempty"`
}

func infoOf(c *object.Commit) CommitInfo {
	subject, _, _ := strings.Cut(c.Message, "\n")
	info := CommitInfo{Hash: c.Hash.String(), Author: c.Author.Name + " <" + c.Author.Email + ">", When: c.Author.When.UTC(), Subject: subject}
	if c.NumParents() > 0 {
		info.Parent = c.ParentHashes[0].String()
	}
	return info
}

// Info describes commit ref.
func (r *Repo) Info(ref plumbing.Hash) (CommitInfo, error) {
	c, err := r.repo.CommitObject(ref)
	if err != nil {
		return CommitInfo{}, fmt.Errorf("reading commit %s: %w", ref, err)
	}
	return infoOf(c), nil
}

// LastChanged finds, for each path (relative to Options.Path), the newest
// commit at or before ref that changed it (added, modified or deleted),
// following first parents for at most depth commits; a path not found
// that far is left out.
func (r *Repo) LastChanged(ref plumbing.Hash, paths []string, depth int) (map[string]CommitInfo, error) {
	out := map[string]CommitInfo{}
	pending := map[string]bool{}
	for _, p := range paths {
		pending[p] = true
	}
	c, err := r.repo.CommitObject(ref)
	for i := 0; err == nil && len(pending) > 0 && i < depth; i++ {
		var parent *object.Commit
		if c.NumParents() > 0 {
			if parent, err = c.Parent(0); err != nil {
				break
			}
		}
		for p := range pending {
			if fileHash(c, r.repoPath(p)) != fileHash(parent, r.repoPath(p)) {
				out[p] = infoOf(c)
				delete(pending, p)
			}
		}
		if parent == nil {
			break
		}
		c = parent
	}
	if err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("reading history: %w", err)
	}
	return out, nil
}

// fileHash is the hash of the file at p in c, zero when absent.
func fileHash(c *object.Commit, p string) plumbing.Hash {
	if c == nil {
		return plumbing.ZeroHash
	}
	t, err := c.Tree()
	if err != nil {
		return plumbing.ZeroHash
	}
	e, err := t.FindEntry(p)
	if err != nil {
		return plumbing.ZeroHash
	}
	return e.Hash
}

// Message is commit ref's whole message.
func (r *Repo) Message(ref plumbing.Hash) (string, error) {
	c, err := r.repo.CommitObject(ref)
	if err != nil {
		return "", fmt.Errorf("reading commit %s: %w", ref, err)
	}
	return c.Message, nil
}

// LastMatching finds the newest commit at or before ref whose message
// match accepts, following first parents for at most depth commits. Not
// found (ok false) includes a history cut short, as a shallow clone's is.
func (r *Repo) LastMatching(ref plumbing.Hash, match func(message string) bool, depth int) (commit plumbing.Hash, message string, ok bool, err error) {
	c, err := r.repo.CommitObject(ref)
	for i := 0; err == nil && i < depth; i++ {
		if match(c.Message) {
			return c.Hash, c.Message, true, nil
		}
		if c.NumParents() == 0 {
			return plumbing.ZeroHash, "", false, nil
		}
		c, err = c.Parent(0)
	}
	if err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
		return plumbing.ZeroHash, "", false, fmt.Errorf("reading history: %w", err)
	}
	return plumbing.ZeroHash, "", false, nil
}
