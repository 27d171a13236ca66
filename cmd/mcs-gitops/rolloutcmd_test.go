// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
)

const pausedRollout = `rollouts:
- service: shop/cart
  kinds: [Import]
  reached: 2
  started: "2026-01-01T00:00:00Z"
  waveAt: "2026-01-01T00:05:00Z"
  target: abc
  waves:
  - {name: canary, members: [eu-1], soak: 5m0s}
  - {name: eu, members: [eu-2]}
  - {name: rest, members: [us-1]}
  paused: {wave: 2, member: eu-2, gate: applied, message: "the member refused Service/shop/derived-x: denied", since: "2026-01-01T00:06:00Z"}
`

// TestRolloutCommand: list shows a paused rollout and where it stopped;
// resume commits the request on the branch; abort of a service with no
// rollout and a request it does not apply to are refused (exit 1); a
// service not namespace/name is a usage error (exit 2).
func TestRolloutCommand(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitRun(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", remote)
	seed := t.TempDir()
	gitRun(t, seed, "clone", "-q", remote, ".")
	require.NoError(t, os.MkdirAll(filepath.Join(seed, "status"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(seed, layout.RolloutsFile), []byte(pausedRollout), 0o644))
	gitRun(t, seed, "add", "-A")
	gitRun(t, seed, "commit", "-q", "-m", "a paused rollout")
	gitRun(t, seed, "push", "-q", "origin", "HEAD:main")
	cfg := writeConfig(t, "")
	flags := []string{"--config", cfg, "--repo", remote, "--workdir", filepath.Join(t.TempDir(), "clone")}

	out, err := run(t, append([]string{"rollout", "list"}, flags...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "shop/cart")
	assert.Contains(t, out, "2 of 3 (eu)")
	assert.Contains(t, out, "paused at wave 2: member eu-2: applied")
	assert.Contains(t, out, "us-1")

	out, err = run(t, append([]string{"rollout", "abort", "shop/web"}, flags...)...)
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, err.Error(), "no rollout of shop/web is in progress")
	_, err = run(t, append([]string{"rollout", "resume", "cart"}, flags...)...)
	assert.Equal(t, 2, exitCode(err))

	out, err = run(t, append([]string{"rollout", "resume", "shop/cart"}, flags...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "shop/cart: Resume requested in status/rollouts.yaml")
	data := gitOut(t, remote, "show", "main:"+layout.RolloutsFile)
	st, err := rollout.Parse([]byte(data))
	require.NoError(t, err)
	assert.Equal(t, rollout.Resume, st.Find("shop/cart").Request)
	assert.Contains(t, gitOut(t, remote, "log", "-1", "--format=%s", "main"), "request: resume the rollout of shop/cart")
}
