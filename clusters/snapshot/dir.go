// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcs-gitops/mcs-gitops/internal/nofollow"
)

// FileName is where a member's snapshot lives inside an inputs directory
// as one file; DirName as the files a commit lays it out in.
func FileName(member string) string { return member + ".yaml" }

// DirName is the directory of a member's snapshot split into parts:
// cluster.yaml and <namespace>/<service>.yaml (layout.InputFiles).
func DirName(member string) string { return member }

// LoadDir reads every member's snapshot from dir, in the given order:
// <member>.yaml, or the directory <member>/ of its parts as a commit lays
// them out (so --inputs can be a checkout's inputs/). A member without
// either is an error naming the file: an absent snapshot must never read
// as "this member exports nothing"; so is one with both. A file or
// directory for a member that is not in the ClusterSet is an error too,
// since it is most likely a renamed member whose exports would silently
// vanish. Each snapshot is read strictly (ParseStrict), its warnings
// judged against now.
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
		m, isFile := strings.CutSuffix(name, ".yaml")
		if e.IsDir() == isFile || strings.HasPrefix(name, ".") {
			continue
		}
		if !known[m] {
			return nil, fmt.Errorf("%s: no member %q in the ClusterSet; remove it or add the member", filepath.Join(dir, name), m)
		}
	}
	out := make([]*Snapshot, 0, len(members))
	var errs []error
	for _, m := range members {
		s, err := loadMember(dir, m, now)
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

// loadMember reads member's snapshot from dir, as one file or as parts.
func loadMember(dir, m string, now time.Time) (*Snapshot, error) {
	path := filepath.Join(dir, FileName(m))
	partsDir := filepath.Join(dir, DirName(m))
	// A committed link could read anything the job can (its environment,
	// a mounted token) into a parse error; read only regular files and
	// directories.
	data, err := nofollow.ReadFile(path)
	fileMissing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !fileMissing {
		return nil, fmt.Errorf("member %q: %w", m, err)
	}
	info, derr := os.Lstat(partsDir)
	switch {
	case derr == nil && !info.IsDir():
		return nil, fmt.Errorf("member %q: %s is a %s, not a directory", m, partsDir, nofollow.Kind(info.Mode()))
	case derr == nil && !fileMissing:
		return nil, fmt.Errorf("member %q: both %s and %s hold its snapshot; keep one", m, path, partsDir)
	case derr == nil:
		srcs, err := readParts(partsDir)
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", m, err)
		}
		return ParseStrictSources(m, partsDir, srcs, now)
	case fileMissing:
		return nil, fmt.Errorf("member %q: snapshot %s is missing", m, path)
	}
	return ParseStrict(m, path, data, now)
}

// readParts reads the .yaml files of a member's snapshot directory
// (cluster.yaml, <namespace>/<service>.yaml), in the order Format writes
// them: cluster.yaml first, then by namespace and name.
func readParts(dir string) ([]Source, error) {
	var srcs []Source
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".yaml") {
			return nil
		}
		data, err := nofollow.ReadFile(path)
		if err != nil {
			return err
		}
		srcs = append(srcs, Source{File: path, Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	name := func(path string) string {
		rel, _ := filepath.Rel(dir, path)
		return strings.TrimSuffix(filepath.ToSlash(rel), ".yaml")
	}
	slices.SortFunc(srcs, func(a, b Source) int { return ComparePartNames(name(a.File), name(b.File)) })
	return srcs, nil
}
