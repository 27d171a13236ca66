// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
)

// The test binary links the same libraries as mcs-gitops, so their versions
// must show; go test records no revision and no version.
func TestVersion(t *testing.T) {
	out, err := run(t, "version")
	require.NoError(t, err)
	assert.Contains(t, out, "version:")
	assert.Contains(t, out, buildinfo.Devel)
	assert.Regexp(t, `(?m)^go: +`+runtime.Version()+`$`, out)
	assert.Regexp(t, `(?m)^sigs\.k8s\.io/mcs-api: +v\d+\.\d+\.\d+`, out)
	assert.Regexp(t, `(?m)^sigs\.k8s\.io/gateway-api: +v\d+\.\d+\.\d+`, out)

	flag, err := run(t, "--version")
	require.NoError(t, err)
	assert.Equal(t, out, flag, "--version prints what version prints")

	out, err = run(t, "version", "-o", "json")
	require.NoError(t, err)
	var got buildinfo.Info
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, buildinfo.Read(), got)
	assert.NotEmpty(t, got.Modules["sigs.k8s.io/mcs-api"])

	_, err = run(t, "version", "-o", "yaml")
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, err.Error(), `--output "yaml"`)
}
