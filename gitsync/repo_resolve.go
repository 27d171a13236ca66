// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// Resolve turns a revision a user types (a commit hash or its prefix, a
// branch, a tag, HEAD, HEAD~1) into a commit hash.
func (r *Repo) Resolve(rev string) (plumbing.Hash, error) {
	h, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("resolve %q: %w", rev, err)
	}
	return *h, nil
}
