// SPDX-License-Identifier: Apache-2.0

package layout_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/fixtures"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Every scenario's report survives the trip through status/ files.
func TestReadReportRoundTrip(t *testing.T) {
	scenarios, err := fixtures.LoadScenarios("../../fixtures")
	require.NoError(t, err)
	require.NotEmpty(t, scenarios)
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			out, err := render.Render(s.Config, s.Snapshots, s.Committed)
			if err != nil {
				t.Skipf("scenario does not render: %v", err)
			}
			files, err := layout.Files(out)
			require.NoError(t, err)
			got, err := layout.ReadReport(files)
			require.NoError(t, err)
			want := out.Report
			want.Warnings = nil
			if len(want.Services) == 0 {
				want.Services = []render.ServiceReport{}
			}
			assert.Equal(t, &want, got)
		})
	}
}

func TestReadReportErrorsNameTheFile(t *testing.T) {
	_, err := layout.ReadReport(map[string][]byte{"status/shop/cart.yaml": []byte("exports: {")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "status/shop/cart.yaml")

	_, err = layout.ReadReport(map[string][]byte{"status/shop/cart.yaml": []byte("namespace: shop\nname: other\n")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "shop/other")
}

func TestReadReportIgnoresOtherFiles(t *testing.T) {
	r, err := layout.ReadReport(map[string][]byte{
		"status/SUMMARY.md":           []byte("# x"),
		"status/members.yaml":         []byte("- member: a\n"),
		"clusters/a/shop/cart/x.yaml": []byte("kind: Service"),
		"status/shop/cart.yaml":       []byte("# Rendered by mcs-gitops; edits are overwritten.\nnamespace: shop\nname: cart\nexports: []\nendpoints:\n  a: 2\n"),
	})
	require.NoError(t, err)
	require.Len(t, r.Services, 1)
	assert.Equal(t, map[string]int{"a": 2}, r.Services[0].Endpoints)
}
