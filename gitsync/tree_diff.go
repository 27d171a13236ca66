// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/nofollow"
)

// DiffTree returns a unified diff from what dir holds to files, empty when
// the tree is current. Nothing is written. A symbolic link or special file
// under the roots is shown as a removal with a note, never read: the diff
// of a pull request's tree is printed in CI logs.
func DiffTree(dir string, files map[string][]byte, roots []string) (string, *Changes, error) {
	pl, err := plan(dir, files, roots)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	diff := func(p string, want []byte, exists bool) error {
		from, to := "a/"+p, "b/"+p
		var have []byte
		switch {
		case pl.unsafe[p]:
			from = "a/" + p + " (not a regular file; not read, will be deleted)"
		case pl.missing[p]:
			from = "/dev/null"
		default:
			have, err = nofollow.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if errors.Is(err, fs.ErrNotExist) {
				from = "/dev/null"
			} else if err != nil {
				return &IOError{err}
			}
		}
		if !exists {
			to = "/dev/null"
		}
		text := unified(have, want, from, to)
		if text == "" && pl.unsafe[p] {
			text = "--- " + from + "\n+++ " + to + "\n"
		}
		b.WriteString(text)
		return nil
	}
	for _, p := range pl.Written {
		if err := diff(p, files[p], true); err != nil {
			return "", nil, err
		}
	}
	for _, p := range pl.Removed {
		if err := diff(p, nil, false); err != nil {
			return "", nil, err
		}
	}
	return b.String(), &pl.Changes, nil
}
