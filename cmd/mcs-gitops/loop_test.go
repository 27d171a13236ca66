// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeConfig writes a one-member ClusterSet whose kubeconfig points at a
// port nothing listens on.
func writeConfig(t *testing.T, extra string) string {
	dir := t.TempDir()
	kc := `apiVersion: v1
kind: Config
clusters:
- name: down
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: down
  context: {cluster: down, user: down}
current-context: down
users:
- name: down
  user: {}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "down.kubeconfig"), []byte(kc), 0o600))
	cfg := "apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: t\nspec:\n  members:\n" +
		"  - name: down\n    kubeconfig:\n      path: down.kubeconfig\n  sync:\n    memberTimeout: 2s\n" + extra
	p := filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(p, []byte(cfg), 0o644))
	return p
}

func TestSyncUsageErrors(t *testing.T) {
	cfg := writeConfig(t, "")
	_, err := run(t, "sync", "--config", cfg)
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "--repo")

	_, err = run(t, "sync", "--config", cfg, "--repo", t.TempDir(), "--log-format", "xml")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "--log-format")

	_, err = run(t, "diff", "--config", filepath.Join(t.TempDir(), "missing.yaml"), "--repo", t.TempDir())
	assert.Equal(t, 2, exitCode(err))

	_, err = run(t, "run", "--config", cfg, "--liveness-cycles", "-1")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "--liveness-cycles")
}

// A member that cannot be read still lets the cycle commit, and the exit
// code (1) and the output name it.
func TestSyncWithUnreachableMemberExitsOne(t *testing.T) {
	cfg := writeConfig(t, "")
	repo := t.TempDir()
	_, err := git.PlainInit(repo, false)
	require.NoError(t, err)
	out, err := run(t, "sync", "--config", cfg, "--repo", repo)
	assert.Equal(t, 1, exitCode(err), "output: %s", out)
	assert.ErrorContains(t, err, "down")
	assert.Contains(t, out, "committed")
	assert.Contains(t, out, "not read")
	health, err := os.ReadFile(filepath.Join(repo, "status", "members.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(health), "unreachableSince")
}

// A member whose kubeconfig file is missing, unparsable or lacks the
// context is a mistake in the local configuration, not an outage: sync and
// run exit 2 naming the file and commit nothing, where an outage would be
// committed as "unreachable since".
func TestLocalConfigErrorExitsTwo(t *testing.T) {
	cases := map[string]func(dir string){
		"missing file": func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "down.kubeconfig"))) },
		"unparsable file": func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "down.kubeconfig"), []byte("clusters: {"), 0o600))
		},
		"no such context": func(dir string) {
			p := filepath.Join(dir, "clusterset.yaml")
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			data = []byte(strings.Replace(string(data), "path: down.kubeconfig", "path: down.kubeconfig\n      context: nowhere", 1))
			require.NoError(t, os.WriteFile(p, data, 0o644))
		},
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := writeConfig(t, "")
			breakIt(filepath.Dir(cfg))
			repo := t.TempDir()
			r, err := git.PlainInit(repo, false)
			require.NoError(t, err)
			out, err := run(t, "sync", "--config", cfg, "--repo", repo)
			assert.Equal(t, 2, exitCode(err), "output: %s", out)
			assert.ErrorContains(t, err, "down.kubeconfig")
			_, err = r.Head()
			assert.ErrorIs(t, err, plumbing.ErrReferenceNotFound, "nothing is committed")
			assert.NoFileExists(t, filepath.Join(repo, "status", "members.yaml"))

			_, err = run(t, "run", "--config", cfg, "--repo", repo, "--leader-elect=false", "--metrics-addr", "127.0.0.1:0")
			assert.Equal(t, 2, exitCode(err))
			assert.ErrorContains(t, err, "down.kubeconfig")
		})
	}
}
