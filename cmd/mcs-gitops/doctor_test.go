// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDoctorAndJoinUsage(t *testing.T) {
	cfg := writeConfig(t, "")
	for _, args := range [][]string{
		{"doctor", "--config", cfg, "-o", "yaml"},
		{"doctor", "--config", cfg, "--skip", "nope"},
		{"doctor", "--config", cfg, "--skip", "reachable"},
		{"doctor", "--config", cfg, "--member", "nope"},
		{"doctor", "--config", cfg, "--dns-server", "down"},
		{"member", "join", "x", "--kubeconfig", cfg},
		{"member", "join", "x", "--kubeconfig-out", "/dev/null", "--dns", "--coredns-configmap", "coredns"},
	} {
		_, err := run(t, args...)
		assert.Equal(t, 2, exitCode(err), "%v: %v", args, err)
	}
	_, err := run(t, "member", "join", "x", "--kubeconfig", cfg)
	assert.ErrorContains(t, err, "--management-kubeconfig")
}

// A member that cannot be reached fails doctor (exit 1), names it, and the
// checks that could not run are shown as skipped.
func TestDoctorUnreachableMember(t *testing.T) {
	out, err := run(t, "doctor", "--config", writeConfig(t, ""))
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, "FAIL reachable")
	assert.Contains(t, out, "skip permissions  not reachable")
	assert.Contains(t, out, "1 error(s)")
	out, err = run(t, "doctor", "--config", writeConfig(t, ""), "-o", "json", "--skip", "coredns")
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, `"errors": 1`)
}
