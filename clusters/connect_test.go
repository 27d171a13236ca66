// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Only what this machine's files say is a LocalConfigError: a kubeconfig
// Secret that cannot be read yet stays a member problem, which run
// outlives until member join writes it.
func TestConnectTellsLocalConfigErrorsApart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.kubeconfig"), []byte("clusters: {"), 0o600))
	cs := &v1alpha1.ClusterSet{}
	cs.Spec.Members = []v1alpha1.Member{
		{Name: "missing", Kubeconfig: v1alpha1.KubeconfigRef{Path: "missing.kubeconfig"}},
		{Name: "bad", Kubeconfig: v1alpha1.KubeconfigRef{Path: "bad.kubeconfig"}},
		{Name: "secret", Kubeconfig: v1alpha1.KubeconfigRef{SecretRef: &v1alpha1.SecretKeyRef{Namespace: "ns", Name: "s", Key: "k"}}},
	}
	set := Connect(context.Background(), cs, ConnectOptions{BaseDir: dir})
	local := func(name string) bool {
		var le *LocalConfigError
		m := set.Member(name)
		require.Error(t, m.Err, name)
		return errors.As(m.Err, &le)
	}
	assert.True(t, local("missing"))
	assert.ErrorContains(t, set.Member("missing").Err, "missing.kubeconfig does not exist")
	assert.True(t, local("bad"))
	assert.False(t, local("secret"))
}
