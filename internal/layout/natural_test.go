// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
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
	s := Summary(r, []string{"cluster-1"})
	assert.Less(t, strings.Index(s, "shop/svc2 |"), strings.Index(s, "shop/svc10 |"))
	assert.Less(t, strings.Index(s, "shop/svc1 |"), strings.Index(s, "shop/svc2 |"))
}

// At 20 members a row says "all 20 members" or "all but cluster-7"
// rather than twenty names; a member whose namespace the render creates
// is marked, not a problem; each member's reach is one row.
func TestSummaryAtManyMembers(t *testing.T) {
	var members []string
	for i := 1; i <= 20; i++ {
		members = append(members, fmt.Sprintf("cluster-%d", i))
	}
	without := func(gone ...string) []string {
		var out []string
		for _, m := range members {
			if !slices.Contains(gone, m) {
				out = append(out, m)
			}
		}
		return out
	}
	r := &render.Report{Services: []render.ServiceReport{
		{Namespace: "shop", Name: "cart", Type: "ClusterSetIP", ImportedBy: members, Endpoints: map[string]int{"cluster-1": 2},
			CreatedNamespace: []string{"cluster-20"}},
		{Namespace: "shop", Name: "web", Type: "ClusterSetIP", ImportedBy: without("cluster-7"), Endpoints: map[string]int{"cluster-1": 1, "cluster-2": 1}},
		{Namespace: "shop", Name: "db", Type: "Headless", ImportedBy: []string{"cluster-3", "cluster-4"}, Endpoints: map[string]int{"cluster-3": 1}},
	}}
	s := Summary(r, members)
	assert.Contains(t, s, "| shop/cart | ClusterSetIP |  | all 20 members; cluster-20 (namespace will be created) | cluster-1: 2 |")
	assert.Contains(t, s, "| all but cluster-7 |")
	assert.Contains(t, s, "| shop/db | Headless |  | cluster-3, cluster-4 |")
	assert.Contains(t, s, "## What each member can reach\n\n| member | services | from |\n|---|---:|---|\n")
	assert.Contains(t, s, "| cluster-3 | 3 | cluster-1 (2), cluster-2 (1), cluster-3 (1) |\n")
	assert.Contains(t, s, "| cluster-7 | 1 | cluster-1 (1) |\n")
	assert.NotContains(t, s, "## Problems", "a namespace that will be created is not a problem")
	// Past 12 members a graph cannot be read: the matrix instead.
	assert.NotContains(t, s, "```mermaid")
	assert.Contains(t, s, "past 60 paths or 12 members a graph crosses its edges")
	assert.Contains(t, s, "| cluster-3 | 2 | 1 |  |", "cluster-3 reaches 2 services through cluster-1 and 1 through cluster-2; its own export is no path")
	assert.Contains(t, s, "| cluster-4 | 2 | 1 | 1 |", "cluster-4 reaches db through cluster-3")
	small := Summary(r, members[:4])
	assert.Contains(t, small, "```mermaid\nflowchart LR\n")
}
