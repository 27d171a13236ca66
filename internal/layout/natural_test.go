// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/render"
)

func TestNaturalCompare(t *testing.T) {
	names := []string{"svc10", "svc2", "svc1", "svc-2", "a01", "a1", "b", "svc02x", "svc2x", ""}
	slices.SortFunc(names, naturalCompare)
	assert.Equal(t, []string{"", "a01", "a1", "b", "svc-2", "svc1", "svc2", "svc02x", "svc2x", "svc10"}, names)
	for _, a := range names {
		for _, b := range names {
			assert.Equal(t, naturalCompare(a, b) == 0, a == b, "%q %q: a total order", a, b)
			assert.Equal(t, naturalCompare(a, b) < 0, naturalCompare(b, a) > 0, "%q %q: antisymmetric", a, b)
		}
	}
}

// SUMMARY.md lists services as a person reads them: svc2 before svc10.
func TestSummaryNaturalOrder(t *testing.T) {
	r := &render.Report{}
	for _, n := range []string{"svc1", "svc10", "svc2"} {
		r.Services = append(r.Services, render.ServiceReport{Namespace: "shop", Name: n})
	}
	s := Summary(r)
	assert.Less(t, strings.Index(s, "shop/svc2 |"), strings.Index(s, "shop/svc10 |"))
	assert.Less(t, strings.Index(s, "shop/svc1 |"), strings.Index(s, "shop/svc2 |"))
}
