// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documented CI step, render --check, on a pull request that committed
// links into status/ and clusters/: it reports them and prints nothing of
// what they point at; render then deletes them and writes nothing outside.
func TestRenderCheckOnATamperedTree(t *testing.T) {
	dir := copyDemo(t)
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"), "--out", dir}
	_, err := run(t, append([]string{"render"}, args...)...)
	require.NoError(t, err)

	secret := filepath.Join(t.TempDir(), "environ")
	require.NoError(t, os.WriteFile(secret, []byte("CI_JOB_TOKEN=hunter2-secret\n"), 0o600))
	outside := t.TempDir()
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "status", "x.yaml")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "clusters", "cluster-2")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "clusters", "cluster-2")))

	out, err := run(t, append([]string{"render", "--check"}, args...)...)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.NotContains(t, out, "hunter2")
	assert.Contains(t, out, "warning: status/x.yaml is not a regular file")
	assert.Contains(t, out, "--- a/status/x.yaml (not a regular file; not read, will be deleted)")

	out, err = run(t, append([]string{"render"}, args...)...)
	require.NoError(t, err)
	assert.Contains(t, out, "warning: clusters/cluster-2 is not a regular file")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written through the link")
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "CI_JOB_TOKEN=hunter2-secret\n", string(b), "the link's target is untouched")

	_, err = run(t, append([]string{"render", "--check"}, args...)...)
	require.NoError(t, err, "after render the tree is current")

	// status/gateways.yaml is read before rendering (the committed port
	// allocations): a link there is refused, not read into a parse error.
	gateways := filepath.Join(dir, "status", "gateways.yaml")
	require.NoError(t, os.Symlink(secret, gateways))
	_, err = run(t, append([]string{"render", "--check"}, args...)...)
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, err.Error(), "gateways.yaml is a symbolic link")
	assert.NotContains(t, err.Error(), "hunter2")
}

// A write that fails half way (here RLIMIT_FSIZE, as a full disk would) is
// exit code 3, not "invalid input", and leaves --out as it was.
func TestRenderOnAFullDiskExits3AndChangesNothing(t *testing.T) {
	if f := flag.Lookup("test.testlogfile"); f != nil && f.Value.String() != "" {
		// The limit binds go test's own log of opened files too, which is
		// kept only when results are cached; make test runs -count=1.
		t.Skip("RLIMIT_FSIZE would cut go test's cache log: run with -count=1")
	}
	dir := copyDemo(t)
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"), "--out", dir}
	before := listTree(t, dir)

	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	limit := old
	limit.Cur = 512 // smaller than the larger rendered files, larger than the smallest
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit))
	_, err := run(t, append([]string{"render"}, args...)...)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old))

	require.Error(t, err)
	assert.Equal(t, 3, exitCode(err), "%v", err)
	assert.Contains(t, err.Error(), dir)
	assert.Equal(t, before, listTree(t, dir), "nothing half-written, nothing staged left behind")
}

func listTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}))
	return out
}
