// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/go-git/go-git/v5"
)

// OpenLocal opens, for reading commits only, the repository that holds
// dir (at dir or above it, as git finds it), with the rendered tree at
// sub-path path. Nothing is cloned, fetched or checked out: a pull
// request's checkout in CI reads its base and head commits through it
// (Resolve, Files, Info). Its writing methods must not be called.
func OpenLocal(dir, path string) (*Repo, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("%s is not in a Git repository", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the repository at %s: %w", dir, err)
	}
	p, err := cleanSubPath(path)
	if err != nil {
		return nil, err
	}
	r := &Repo{repo: repo, opts: Options{Path: p}}
	if wt, err := repo.Worktree(); err == nil {
		r.root = wt.Filesystem.Root()
	}
	return r, nil
}

// LocalRoot is the work tree root of the repository holding dir, and
// dir relative to it (slash-separated, "" for the root): where a
// clusterset.yaml found on disk sits in the repository.
func LocalRoot(dir string) (root, rel string, err error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return "", "", fmt.Errorf("%s is not in a Git repository with a work tree: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", "", fmt.Errorf("%s is not in a Git repository with a work tree: %w", dir, err)
	}
	root = wt.Filesystem.Root()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err = filepath.Rel(root, abs)
	if err != nil {
		return "", "", err
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	return root, rel, nil
}
