// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshotDir reads every entry under dir without following links: regular
// files by content, links by target, directories as "dir".
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	}))
	return out
}

// A pull request that commits a link in the managed tree must not get the
// CI job's secrets printed by render --check.
func TestDiffTreeNeverReadsThroughALink(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "environ")
	require.NoError(t, os.WriteFile(secret, []byte("GITHUB_TOKEN=hunter2-secret\n"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "status"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "status", "x.yaml")))       // not rendered
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "status", "SUMMARY.md")))   // rendered
	require.NoError(t, os.Symlink(filepath.Dir(secret), filepath.Join(dir, "clusters"))) // a whole root

	files := map[string][]byte{"status/SUMMARY.md": []byte("s\n"), "clusters/a/environ": []byte("k\n")}
	diff, c, err := DiffTree(dir, files, roots)
	require.NoError(t, err)
	assert.NotContains(t, diff, "hunter2")
	assert.Equal(t, []string{"clusters", "status/SUMMARY.md", "status/x.yaml"}, c.Unsafe)
	assert.Equal(t, []string{"clusters/a/environ", "status/SUMMARY.md"}, c.Written)
	assert.Equal(t, []string{"clusters", "status/x.yaml"}, c.Removed)
	assert.Contains(t, diff, "--- a/status/x.yaml (not a regular file; not read, will be deleted)\n+++ /dev/null\n")
}

// A link anywhere under a root, the root included, is deleted (the link,
// never its target) and the rendered files are written into real
// directories; nothing outside dir changes.
func TestWriteTreeNeverWritesThroughALink(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "kustomization.yaml"), []byte("theirs\n"), 0o644))
	before := snapshotDir(t, outside)

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "clusters", "b"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "clusters", "a")))                                                            // directory link
	require.NoError(t, os.Symlink(filepath.Join(outside, "kustomization.yaml"), filepath.Join(dir, "clusters", "b", "kustomization.yaml"))) // file link, rendered path
	require.NoError(t, os.Symlink("../../..", filepath.Join(dir, "status")))                                                                // relative root link

	files := map[string][]byte{
		"clusters/a/kustomization.yaml": []byte("a\n"),
		"clusters/b/kustomization.yaml": []byte("b\n"),
		"status/SUMMARY.md":             []byte("s\n"),
	}
	c, err := WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.Equal(t, []string{"clusters/a", "clusters/b/kustomization.yaml", "status"}, c.Unsafe)
	assert.Equal(t, before, snapshotDir(t, outside), "nothing outside --out is written")
	got := snapshotDir(t, dir)
	assert.Equal(t, map[string]string{
		".": "dir", "clusters": "dir", "clusters/a": "dir", "clusters/b": "dir", "status": "dir",
		"clusters/a/kustomization.yaml": "a\n", "clusters/b/kustomization.yaml": "b\n", "status/SUMMARY.md": "s\n",
	}, got)

	c, err = WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.True(t, c.Empty(), "the second write finds the tree current")
}

// A named pipe must neither hang the reader nor be written through.
func TestTreeDoesNotBlockOnANamedPipe(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "status"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "status", "SUMMARY.md"), 0o644))
	done := make(chan error, 1)
	go func() {
		files := map[string][]byte{"status/SUMMARY.md": []byte("s\n")}
		if _, _, err := DiffTree(dir, files, roots); err != nil {
			done <- err
			return
		}
		_, err := WriteTree(dir, files, roots)
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("reading the tree blocked on a named pipe")
	}
	b, err := os.ReadFile(filepath.Join(dir, "status", "SUMMARY.md"))
	require.NoError(t, err)
	assert.Equal(t, "s\n", string(b))
}

// A disk that fills up half way leaves the tree exactly as it was, and the
// error says it is an I/O failure. RLIMIT_FSIZE makes the kernel refuse a
// write past the limit (EFBIG, Go ignores SIGXFSZ), which is what a full
// disk does to the one file that does not fit.
func TestWriteTreeOnAFullDiskChangesNothing(t *testing.T) {
	dir := t.TempDir()
	_, err := WriteTree(dir, map[string][]byte{
		"clusters/a/kustomization.yaml": []byte("old\n"),
		"status/SUMMARY.md":             []byte("old\n"),
	}, roots)
	require.NoError(t, err)
	before := snapshotDir(t, dir)

	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	limit := old
	limit.Cur = 16 << 10
	// The limit binds every file of the process, go test's own log of
	// opened files included: leave that room to grow.
	if f := flag.Lookup("test.testlogfile"); f != nil && f.Value.String() != "" {
		if st, err := os.Stat(f.Value.String()); err == nil {
			limit.Cur = uint64(st.Size()) + 64<<10
		}
	}
	big := bytes.Repeat([]byte{'x'}, int(limit.Cur)+64<<10)
	next := map[string][]byte{
		"clusters/a/kustomization.yaml":   []byte("new\n"),
		"clusters/b/web/api/service.yaml": []byte("new\n"),
		"clusters/b/web/api/slices.yaml":  big,
		"status/web/api.yaml":             []byte("new\n"),
	}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit))
	_, err = WriteTree(dir, next, roots)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old))

	require.Error(t, err)
	var ioErr *IOError
	assert.True(t, errors.As(err, &ioErr), "a write failure is an IOError, not bad input: %v", err)
	assert.Equal(t, before, snapshotDir(t, dir), "no half-written manifest, no staged file, no new directory")

	c, err := WriteTree(dir, next, roots)
	require.NoError(t, err, "with room again, the same write succeeds")
	assert.Len(t, c.Written, 4)
	assert.Len(t, c.Removed, 1)
}

// snapshot --out writes single-file roots (inputs/<member>.yaml); a linked
// inputs/ directory must not take them elsewhere.
func TestWriteTreeSingleFileRootsBelowALink(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "inputs")))
	files := map[string][]byte{"inputs/a.yaml": []byte("a\n"), "inputs/b.yaml": []byte("b\n")}
	c, err := WriteTree(dir, files, []string{"inputs/a.yaml", "inputs/b.yaml"})
	require.NoError(t, err)
	assert.Equal(t, []string{"inputs"}, c.Unsafe)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.Equal(t, map[string]string{".": "dir", "inputs": "dir", "inputs/a.yaml": "a\n", "inputs/b.yaml": "b\n"}, snapshotDir(t, dir))
}
