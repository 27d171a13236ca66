// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return 2
	}
	return 0
}

// copyDemo copies the demo ClusterSet so a test can change its inputs.
func copyDemo(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../fixtures/demo")))
	return dir
}

func TestRenderThenCheck(t *testing.T) {
	dir := copyDemo(t)
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"), "--out", dir}

	out, err := run(t, append([]string{"render"}, args...)...)
	require.NoError(t, err)
	assert.Contains(t, out, "rendered 3 member(s), 2 service(s)")
	assert.FileExists(t, filepath.Join(dir, "clusters", "cluster-2", "httpbin", "httpbin", "serviceimport.yaml"))

	out, err = run(t, append([]string{"render", "--check"}, args...)...)
	require.NoError(t, err)
	assert.Contains(t, out, "current")

	out, err = run(t, append([]string{"render"}, args...)...)
	require.NoError(t, err)
	assert.Contains(t, out, "0 file(s) written, 0 removed", "an unchanged world writes nothing")

	// cluster-3 stops exporting httpbin: the committed output is now stale.
	in := filepath.Join(dir, "inputs", "cluster-3.yaml")
	b, err := os.ReadFile(in)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, []byte(strings.Replace(string(b), "  name: httpbin\n  namespace: httpbin\n  creationTimestamp", "  name: httpbin-old\n  namespace: httpbin\n  creationTimestamp", 1)), 0o644))
	out, err = run(t, append([]string{"render", "--check"}, args...)...)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, err.Error(), "stale")
	assert.Contains(t, out, "--- a/clusters/cluster-2/httpbin/httpbin/endpointslice-cluster-3-")
	assert.Contains(t, out, "+++ /dev/null")
	assert.Contains(t, out, "-  - cluster: cluster-3")
}

func TestValidate(t *testing.T) {
	dir := copyDemo(t)
	out, err := run(t, "validate", "--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"))
	require.NoError(t, err)
	assert.Contains(t, out, "valid: 3 member(s), 2 exported service(s), 0 problem(s)")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs", "cluster-2.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n"), 0o644))
	_, err = run(t, "validate", "--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"))
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, err.Error(), "cluster-2.yaml:1: Service /x: metadata.namespace is required")
}

func TestEveryCommandHasHelpWithExample(t *testing.T) {
	for _, c := range newRootCommand().Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		assert.NotEmpty(t, c.Long, "%s needs a long description", c.Name())
		assert.NotEmpty(t, c.Example, "%s needs an example", c.Name())
	}
}
