// SPDX-License-Identifier: Apache-2.0

package nofollow

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// UnsafeError names a path that is not a regular file or directory where
// one was expected, and what it is instead.
type UnsafeError struct {
	Path string
	Kind string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file; it is not followed", e.Path, e.Kind)
}

// Kind names a file mode for a person: "symbolic link", "named pipe", ....
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	}
	return "special file"
}

// ReadFile reads path, refusing (with *UnsafeError) a last component that
// is a symbolic link or anything but a regular file. Opening never blocks,
// so a named pipe is refused instead of hanging the reader. The parent
// directories are the caller's to check (CheckDir).
func ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if isSymlinkLoop(err) {
			return nil, &UnsafeError{Path: path, Kind: "symbolic link"}
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &UnsafeError{Path: path, Kind: Kind(st.Mode())}
	}
	// Sized like os.ReadFile does: the tree is read file by file, tens of
	// thousands of them, and growing a buffer for each doubles the garbage.
	data := make([]byte, 0, st.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) { // it grew since the stat
			data = append(data, 0)[:len(data)]
		}
	}
}

// NotADirectory walks dir (slash-separated, relative to root) from the top
// and returns the first component that exists but is not a real directory
// (a symbolic link, a file), with its mode; "" when there is none. root
// itself is trusted and may be a link, such as a ConfigMap mount. The walk
// is top down because below a link Lstat would already have followed it,
// and it stops at a missing component, below which nothing exists.
func NotADirectory(root, dir string) (string, fs.FileMode, error) {
	p, rel := root, ""
	for _, part := range strings.Split(strings.Trim(filepath.ToSlash(dir), "/"), "/") {
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			return "", 0, fmt.Errorf("%s: a managed path may not contain ..", dir)
		}
		p, rel = filepath.Join(p, part), path.Join(rel, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return "", 0, nil
		}
		if err != nil {
			return "", 0, err
		}
		if !st.IsDir() {
			return rel, st.Mode(), nil
		}
	}
	return "", 0, nil
}

// CheckDir verifies that every component of dir under root is a real
// directory, or missing (a writer creates it), and names the first that
// is not in an *UnsafeError.
func CheckDir(root, dir string) error {
	bad, mode, err := NotADirectory(root, dir)
	if err != nil || bad == "" {
		return err
	}
	return &UnsafeError{Path: filepath.Join(root, filepath.FromSlash(bad)), Kind: Kind(mode)}
}

// ReadUnder reads root/rel without following a symbolic link anywhere below
// root: CheckDir on its directory, then ReadFile.
func ReadUnder(root, rel string) ([]byte, error) {
	if err := CheckDir(root, path.Dir(filepath.ToSlash(rel))); err != nil {
		return nil, err
	}
	return ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
}
