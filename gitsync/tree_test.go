// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var roots = []string{"clusters", "status"}

func TestWriteTreeWritesOnlyChangesAndRemovesStale(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "clusterset.yaml"), []byte("keep me"), 0o644))
	files := map[string][]byte{
		"clusters/a/kustomization.yaml":        []byte("k\n"),
		"clusters/a/ns/svc/serviceimport.yaml": []byte("si\n"),
		"status/SUMMARY.md":                    []byte("s\n"),
	}
	c, err := WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.Len(t, c.Written, 3)

	old := time.Now().Add(-time.Hour)
	unchanged := filepath.Join(dir, "status", "SUMMARY.md")
	require.NoError(t, os.Chtimes(unchanged, old, old))

	delete(files, "clusters/a/ns/svc/serviceimport.yaml")
	files["clusters/a/kustomization.yaml"] = []byte("k2\n")
	c, err = WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.Equal(t, []string{"clusters/a/kustomization.yaml"}, c.Written)
	assert.Equal(t, []string{"clusters/a/ns/svc/serviceimport.yaml"}, c.Removed)
	assert.NoDirExists(t, filepath.Join(dir, "clusters", "a", "ns"), "emptied directories go too")
	st, err := os.Stat(unchanged)
	require.NoError(t, err)
	assert.True(t, st.ModTime().Equal(old), "an identical file is not rewritten")
	b, err := os.ReadFile(filepath.Join(dir, "clusterset.yaml"))
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(b), "files outside the roots are never touched")

	c, err = WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.True(t, c.Empty())
}

func TestWriteTreeRefusesFilesOutsideRoots(t *testing.T) {
	_, err := WriteTree(t.TempDir(), map[string][]byte{"inputs/a.yaml": nil}, roots)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "inputs/a.yaml")
}

func TestDiffTree(t *testing.T) {
	dir := t.TempDir()
	_, err := WriteTree(dir, map[string][]byte{"status/a.yaml": []byte("x: 1\n"), "status/gone.yaml": []byte("g\n")}, roots)
	require.NoError(t, err)
	diff, c, err := DiffTree(dir, map[string][]byte{"status/a.yaml": []byte("x: 2\n"), "status/new.yaml": []byte("n\n")}, roots)
	require.NoError(t, err)
	assert.Equal(t, []string{"status/a.yaml", "status/new.yaml"}, c.Written)
	assert.Equal(t, []string{"status/gone.yaml"}, c.Removed)
	assert.Contains(t, diff, "--- a/status/a.yaml\n+++ b/status/a.yaml\n")
	assert.Contains(t, diff, "-x: 1\n+x: 2\n")
	assert.Contains(t, diff, "--- /dev/null\n+++ b/status/new.yaml")
	assert.Contains(t, diff, "--- a/status/gone.yaml\n+++ /dev/null")
	_, err = os.Stat(filepath.Join(dir, "status", "new.yaml"))
	assert.True(t, os.IsNotExist(err), "DiffTree writes nothing")
}

// A crash can leave a half-written new file or a temporary file behind; the
// next write must repair both rather than trust them.
func TestWriteTreeRepairsInterruptedWrite(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"clusters/a/ns/svc/serviceimport.yaml": []byte("complete: true\n")}
	full := filepath.Join(dir, "clusters", "a", "ns", "svc", "serviceimport.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte("compl"), 0o644))
	require.NoError(t, os.WriteFile(full+".tmp-mcs-gitops", []byte("x"), 0o644))

	c, err := WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.Equal(t, []string{"clusters/a/ns/svc/serviceimport.yaml"}, c.Written)
	assert.Equal(t, []string{"clusters/a/ns/svc/serviceimport.yaml.tmp-mcs-gitops"}, c.Removed)
	b, err := os.ReadFile(full)
	require.NoError(t, err)
	assert.Equal(t, "complete: true\n", string(b))
	assert.NoFileExists(t, full+".tmp-mcs-gitops")
}

// Many files in many directories exercise the parallel writers; every file
// must land with its own content.
func TestWriteTreeManyFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{}
	for i := range 500 {
		files[fmt.Sprintf("clusters/m%d/ns%d/svc/f%d.yaml", i%7, i%13, i)] = []byte(fmt.Sprintf("i: %d\n", i))
	}
	c, err := WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.Len(t, c.Written, 500)
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), p)
	}
	c, err = WriteTree(dir, files, roots)
	require.NoError(t, err)
	assert.True(t, c.Empty())
}

func TestWriteTreeRootMayBeAFile(t *testing.T) {
	dir := t.TempDir()
	roots := []string{"clusterset.yaml", "inputs"}
	c, err := WriteTree(dir, map[string][]byte{"clusterset.yaml": []byte("a\n"), "inputs/x.yaml": []byte("x\n")}, roots)
	require.NoError(t, err)
	assert.Equal(t, []string{"clusterset.yaml", "inputs/x.yaml"}, c.Written)
	c, err = WriteTree(dir, map[string][]byte{"inputs/x.yaml": []byte("x\n")}, roots)
	require.NoError(t, err)
	assert.Equal(t, []string{"clusterset.yaml"}, c.Removed)
}

// DiffFiles compares two trees in memory: new, changed and removed files,
// sorted, a new file from /dev/null and a removed one to it.
func TestDiffFiles(t *testing.T) {
	from := map[string][]byte{"a.yaml": []byte("x: 1\n"), "gone.yaml": []byte("y: 1\n"), "same.yaml": []byte("z\n")}
	to := map[string][]byte{"a.yaml": []byte("x: 2\n"), "new.yaml": []byte("n\n"), "same.yaml": []byte("z\n")}
	patch, c := DiffFiles(from, to)
	assert.Equal(t, []string{"a.yaml", "new.yaml"}, c.Written)
	assert.Equal(t, []string{"new.yaml"}, c.Added)
	assert.Equal(t, []string{"gone.yaml"}, c.Removed)
	assert.Contains(t, patch, "--- a/a.yaml\n+++ b/a.yaml\n")
	assert.Contains(t, patch, "-x: 1\n+x: 2\n")
	assert.Contains(t, patch, "--- /dev/null\n+++ b/new.yaml\n")
	assert.Contains(t, patch, "--- a/gone.yaml\n+++ /dev/null\n")
	assert.NotContains(t, patch, "same.yaml")
	none, c := DiffFiles(to, to)
	assert.Empty(t, none)
	assert.Empty(t, c.Written)
}

// The diffs apply with git apply: a new file, a changed one, a removed
// one, and a last line without a newline. difflib's line split gave every
// hunk a line the file does not have, and git apply refused the patch.
func TestDiffsApplyWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	old := map[string][]byte{
		"clusters/a/changed.yaml": []byte("kind: Service\nport: 8000\nname: web\n"),
		"clusters/a/gone.yaml":    []byte("kind: ServiceImport\n"),
		"clusters/a/tail.yaml":    []byte("no newline"),
	}
	next := map[string][]byte{
		"clusters/a/changed.yaml": []byte("kind: Service\nport: 8001\nname: web\n"),
		"clusters/b/new.yaml":     []byte("kind: EndpointSlice\naddresses: [10.0.0.1]\n"),
		"clusters/a/tail.yaml":    []byte("no newline, changed"),
	}
	check := func(t *testing.T, patch string) {
		dir := t.TempDir()
		for p, b := range old {
			full := filepath.Join(dir, filepath.FromSlash(p))
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			require.NoError(t, os.WriteFile(full, b, 0o644))
		}
		apply := exec.Command("git", "apply", "-")
		apply.Dir = dir
		apply.Stdin = strings.NewReader(patch)
		out, err := apply.CombinedOutput()
		require.NoError(t, err, "git apply: %s\n%s", out, patch)
		for p, b := range next {
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			require.NoError(t, err)
			assert.Equal(t, string(b), string(got), p)
		}
		assert.NoFileExists(t, filepath.Join(dir, "clusters", "a", "gone.yaml"))
	}
	t.Run("DiffFiles", func(t *testing.T) {
		patch, _ := DiffFiles(old, next)
		check(t, patch)
	})
	t.Run("DiffTree", func(t *testing.T) {
		dir := t.TempDir()
		for p, b := range old {
			full := filepath.Join(dir, filepath.FromSlash(p))
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			require.NoError(t, os.WriteFile(full, b, 0o644))
		}
		patch, _, err := DiffTree(dir, next, []string{"clusters"})
		require.NoError(t, err)
		check(t, patch)
	})
}
