// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/discovery"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestAPIServerVersion: the apiservers the tests run are the version they
// are meant to be. make test runs the e2e core a second time with
// MCS_KUBE_APISERVER=kube-apiserver-1.33; this proves that second run was
// against 1.33 and not, silently, the current version again.
func TestAPIServerVersion(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	require.NoError(t, err)
	v, err := dc.ServerVersion()
	require.NoError(t, err)
	t.Logf("kube-apiserver %s", v.GitVersion)
	want := "36"
	if name := os.Getenv("MCS_KUBE_APISERVER"); name != "" {
		_, minor, ok := strings.Cut(strings.TrimPrefix(name, "kube-apiserver-"), ".")
		require.True(t, ok, "MCS_KUBE_APISERVER=%s: want kube-apiserver-1.MINOR", name)
		want = minor
	}
	assert.Equal(t, "1", v.Major)
	assert.Equal(t, want, v.Minor, "serving %s", v.GitVersion)
}
