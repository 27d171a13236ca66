// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/fixtures"
	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// Everything the renderer emits, for every scenario and every member, is
// inside the contract: the applier refuses nothing that was rendered.
func TestContractAcceptsEveryRenderedFixture(t *testing.T) {
	scenarios, err := fixtures.LoadScenarios(filepath.Join("..", "fixtures"))
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, s := range scenarios {
		files, err := s.Render()
		require.NoError(t, err, s.Name)
		for i := range s.Config.Spec.Members {
			m := &s.Config.Spec.Members[i]
			objs, err := Build(files, m.Name)
			require.NoError(t, err, "%s/%s", s.Name, m.Name)
			for _, v := range contract.Check(contract.MemberOf(s.Config, m), objs) {
				t.Errorf("%s/%s: %s", s.Name, m.Name, v)
			}
			for _, o := range objs {
				kinds[o.GetKind()]++
			}
		}
	}
	// The proof is only as good as what the fixtures render.
	for _, k := range []string{"ServiceImport", "Service", "EndpointSlice", "HTTPRoute", "TCPRoute", "ListenerSet", "Namespace"} {
		assert.Positive(t, kinds[k], "no fixture renders a %s", k)
	}
}
