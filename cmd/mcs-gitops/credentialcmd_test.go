// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wrong request is bad input (2) and says what to fix; stdout stays empty,
// since client-go would try to decode it. The Secret itself is read in
// test/e2e (TestCredentialSecretToken).
func TestCredentialSecretTokenInput(t *testing.T) {
	t.Setenv("KUBERNETES_EXEC_INFO", `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`)
	out, err := run(t, "credential", "secret-token", "--namespace", "fleet-system")
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, err.Error(), `set "provideClusterInfo": true`)
	assert.Empty(t, out)

	t.Setenv("KUBERNETES_EXEC_INFO", "")
	_, err = run(t, "credential", "secret-token")
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, err.Error(), "KUBERNETES_EXEC_INFO is not set")
}
