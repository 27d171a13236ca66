// SPDX-License-Identifier: Apache-2.0

package crds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CoreDNS reads ServiceImports through v1alpha1, and mcs-gitops can emit
// either version, so both must be served by what we install.
func TestMCSServesBothVersions(t *testing.T) {
	got, err := MCS()
	require.NoError(t, err)
	require.Len(t, got, 2)
	for _, crd := range got {
		served := map[string]bool{}
		for _, v := range crd.Spec.Versions {
			served[v.Name] = v.Served
		}
		assert.True(t, served["v1alpha1"], "%s must serve v1alpha1", crd.Name)
		assert.True(t, served["v1beta1"], "%s must serve v1beta1", crd.Name)
	}
}
