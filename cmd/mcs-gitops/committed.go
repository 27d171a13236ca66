// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/nofollow"
)

// readCommitted reads what the rendered tree under dir says about the
// world, through the same layout.ReadCommitted as the loop reads a commit
// with, so that an offline render keeps what sync keeps (gateway port
// allocations, the imports review mode holds). An empty or missing tree
// says nothing. Nothing is read through a symbolic link or special file:
// one where a render keeps something from (layout.KeptFiles) is refused
// (exit 2), any other one is skipped, left for the tree check to report
// and the tree write to delete. A read that fails is exit 3.
//
// Only status/ is read: the snapshots an offline render is made from are
// the --inputs directory's, loaded on their own, and the committed ones
// only stand in for unreachable members in the loop.
func readCommitted(dir string) (*layout.Committed, error) {
	files := map[string][]byte{}
	root := filepath.Join(dir, layout.StatusDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !layout.CommittedFile(rel) || !d.Type().IsRegular() && !slices.Contains(layout.KeptFiles, rel) {
			return nil
		}
		data, err := nofollow.ReadUnder(dir, rel)
		if err != nil {
			return err
		}
		files[rel] = data
		return nil
	})
	var unsafe *nofollow.UnsafeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &unsafe):
		return nil, &exitError{2, err}
	case err != nil:
		return nil, &exitError{3, fmt.Errorf("reading %s: %w", root, err)}
	}
	c, err := layout.ReadCommitted(files)
	if err != nil {
		return nil, &exitError{2, fmt.Errorf("%s: %w", filepath.Clean(dir), err)}
	}
	return c, nil
}
