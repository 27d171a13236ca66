// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcs-gitops/mcs-gitops/internal/nofollow"
)

// FileName is where a member's snapshot lives inside an inputs directory.
func FileName(member string) string { return member + ".yaml" }

// LoadDir reads inputs/<member>.yaml for every member, in the given order.
// A member without a file is an error naming the file: an absent snapshot
// must never read as "this member exports nothing". A file for a member
// that is not in the ClusterSet is an error too, since it is most likely a
// renamed member whose exports would silently vanish. Each file is read
// with ParseStrict, its warnings judged against now.
func LoadDir(dir string, members []string, now time.Time) ([]*Snapshot, error) {
	known := map[string]bool{}
	for _, m := range members {
		known[m] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read inputs directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		if m := strings.TrimSuffix(name, ".yaml"); !known[m] {
			return nil, fmt.Errorf("%s: no member %q in the ClusterSet; remove the file or add the member", filepath.Join(dir, name), m)
		}
	}
	out := make([]*Snapshot, 0, len(members))
	var errs []error
	for _, m := range members {
		path := filepath.Join(dir, FileName(m))
		// A committed link could read anything the job can (its
		// environment, a mounted token) into a parse error; read only
		// regular files.
		data, err := nofollow.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("member %q: snapshot %s is missing", m, path))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("member %q: %w", m, err))
			continue
		}
		s, err := ParseStrict(m, path, data, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	// Every member's problem at once: fixing one file at a time, one run
	// each, is slow in CI.
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
