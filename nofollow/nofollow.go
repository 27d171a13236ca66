package nofollow

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
// directories are the caller's to check (CheckParents).
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

// CheckParents verifies that every directory from root (trusted, may
// itself be a link such as a ConfigMap mount) down to rel's parent is a
// real directory, not a symbolic link. Missing directories are fine: a
// writer creates them. rel is slash-separated and relative to root.
func CheckParents(root, rel string) error {
	parts := strings.Split(strings.Trim(filepath.ToSlash(rel), "/"), "/")
	p := root
	for _, part := range parts[:len(parts)-1] {
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			return fmt.Errorf("%s: a managed path may not contain ..", rel)
		}
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return &UnsafeError{Path: p, Kind: Kind(st.Mode())}
		}
	}
	return nil
}

// ReadUnder reads root/rel without following a symbolic link anywhere below
// root: CheckParents, then ReadFile.
func ReadUnder(root, rel string) ([]byte, error) {
	if err := CheckParents(root, rel); err != nil {
		return nil, err
	}
	return ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
}
