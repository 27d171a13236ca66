// SPDX-License-Identifier: Apache-2.0

package change

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// Findings name each change a CI job can fail on, by kind: a withdrawal,
// new reachability, a new conflict, a policy change, a member leaving or
// joining; an unchanged world has none.
func TestFindings(t *testing.T) {
	valid := render.Condition{Type: "Valid", Status: "True"}
	conflict := render.Condition{Type: "Conflict", Status: "True", Reason: "PortConflict"}
	prev := &render.Report{Services: []render.ServiceReport{
		{Namespace: "web", Name: "frontend", ImportedBy: []string{"cluster-1", "cluster-2", "cluster-3"},
			Exports:  []render.ExportReport{{Member: "cluster-2", Conditions: []render.Condition{valid}}},
			Policies: []render.PolicyReport{{Member: "cluster-1", LbType: "FailOver", Clusters: []string{"cluster-2"}}}},
		{Namespace: "shop", Name: "cart", ImportedBy: []string{"cluster-1"},
			Exports: []render.ExportReport{{Member: "cluster-1", Conditions: []render.Condition{valid}}}},
	}}
	next := &render.Report{Services: []render.ServiceReport{
		{Namespace: "web", Name: "frontend", ImportedBy: []string{"cluster-2"},
			Exports: []render.ExportReport{{Member: "cluster-2", Conditions: []render.Condition{valid}}}},
		{Namespace: "shop", Name: "cart", ImportedBy: []string{"cluster-1", "cluster-2"},
			Exports: []render.ExportReport{{Member: "cluster-1", Conditions: []render.Condition{valid, conflict}},
				{Member: "cluster-2", Conditions: []render.Condition{valid, conflict}}}},
	}}
	set := Between(prev, next)
	set.Members = MembersBetween(MemberStates([]string{"cluster-1", "cluster-2", "cluster-3", "cluster-5"}, nil),
		map[string]MemberState{"cluster-1": Reachable, "cluster-2": Reachable, "cluster-4": Reachable, "cluster-5": Stale})
	var lines []string
	for _, f := range set.Findings() {
		lines = append(lines, string(f.Kind)+" "+f.String())
	}
	assert.Equal(t, []string{
		"withdrawal web/frontend: no longer imported by cluster-1, cluster-3",
		"new-reachability shop/cart: now imported by cluster-2",
		"new-conflict shop/cart: cluster-1's export: PortConflict",
		"new-conflict shop/cart: cluster-2's export: PortConflict",
		"policy web/frontend: traffic policy of cluster-1: removed (was FailOver)",
		"member member cluster-3 leaves the ClusterSet",
		"member member cluster-4 joins the ClusterSet",
		"member member cluster-5 unreachable since unknown for longer than staleAfter; its exports are dropped",
	}, lines)
	assert.Empty(t, Between(next, next).Findings())
}
