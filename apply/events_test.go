// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
)

// recorded keeps Events as "Type Reason: note"; pure logic, so a fake.
type recorded []string

func (r *recorded) Eventf(_ runtime.Object, _ runtime.Object, typ, reason, _, note string, args ...any) {
	*r = append(*r, typ+" "+reason+": "+fmt.Sprintf(note, args...))
}

func cond(t, s, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Reason: reason, Message: reason + " message"}
}

func TestExportEventsOnTransitionsOnly(t *testing.T) {
	var r recorded
	a := &Applier{Events: &r, Commit: "0123456789abcdef"}
	u := &unstructured.Unstructured{}
	valid := []metav1.Condition{cond("Valid", "True", "Valid"), cond("Conflict", "False", "NoConflict")}
	conflict := []metav1.Condition{cond("Valid", "True", "Valid"), cond("Conflict", "True", "PortConflict")}
	invalid := []metav1.Condition{cond("Valid", "False", "NoService"), cond("Conflict", "False", "NoConflict")}

	a.exportEvents(u, nil, valid)
	a.exportEvents(u, valid, valid)
	a.exportEvents(u, valid, conflict)
	a.exportEvents(u, conflict, conflict)
	a.exportEvents(u, conflict, valid)
	a.exportEvents(u, valid, invalid)
	assert.Equal(t, recorded{
		"Normal Exported: exported to the ClusterSet (commit 0123456789ab)",
		"Warning Conflict: PortConflict: PortConflict message (commit 0123456789ab)",
		"Normal Exported: exported to the ClusterSet (commit 0123456789ab)",
		"Warning Invalid: NoService message (commit 0123456789ab)",
	}, r)
}

func TestPolicyEvents(t *testing.T) {
	var r recorded
	a := &Applier{Events: &r}
	u := &unstructured.Unstructured{}
	applied := []metav1.Condition{cond("Applied", "True", "Applied")}
	a.policyEvents(u, nil, applied, nil, []string{"east", "west"})
	a.policyEvents(u, applied, applied, []string{"east", "west"}, []string{"east", "west"})
	a.policyEvents(u, applied, applied, []string{"east", "west"}, []string{"west", "east"})
	assert.Equal(t, recorded{
		"Normal Applied: routing to east, west",
		"Normal Rerouted: traffic now goes to west first (was east)",
	}, r)
}

func TestImportEvents(t *testing.T) {
	var r recorded
	a := &Applier{Events: &r}
	u := &unstructured.Unstructured{}
	one := []any{map[string]any{"cluster": "east"}}
	two := []any{map[string]any{"cluster": "west"}, map[string]any{"cluster": "east"}}
	a.importEvents(u, nil, one)
	a.importEvents(u, one, one)
	a.importEvents(u, one, two)
	a.importEvents(u, two, nil)
	assert.Equal(t, recorded{
		"Normal Imported: imported from east",
		"Normal SourcesChanged: imported from east, west (was east)",
	}, r)
}

// The change model's Events: the owner of an export hears who starts and
// stops reaching it; an importer that had the import hears how it
// changed, field by field; a member that just gained it hears Imported
// instead. Nothing without a change set (a commit applied again).
func TestChangeEvents(t *testing.T) {
	var r recorded
	set := &change.Set{Services: []change.Service{
		{Namespace: "shop", Name: "cart", Gained: []string{"cluster-1", "cluster-2"}, Lost: []string{"cluster-4"},
			Fields: []change.Field{{Name: "port http", Old: "8000/TCP", New: "8001/TCP"}}},
		{Namespace: "web", Name: "frontend", Fields: []change.Field{{Name: "sessionAffinity", Old: "None", New: "ClientIP"}}},
	}}
	a := &Applier{Events: &r, Member: "cluster-1", Change: set}
	u := &unstructured.Unstructured{}
	a.reachEvent(u, "shop/cart")
	a.reachEvent(u, "web/frontend")
	a.importChangeEvent(u, "shop/cart") // cluster-1 gains it: Imported says so
	(&Applier{Events: &r, Member: "cluster-3", Change: set}).importChangeEvent(u, "shop/cart")
	a.importChangeEvent(u, "web/frontend")
	a.importChangeEvent(u, "web/absent")
	(&Applier{Events: &r, Member: "cluster-2", Change: set}).importChangeEvent(u, "shop/cart")
	(&Applier{Events: &r, Member: "cluster-4", Change: &change.Set{Services: []change.Service{{Namespace: "shop", Name: "cart", Gained: []string{"cluster-4"}}}}}).reachEvent(u, "shop/cart")
	(&Applier{Events: &r, Member: "cluster-1"}).reachEvent(u, "shop/cart")
	assert.Equal(t, recorded{
		"Normal ReachChanged: now reachable from cluster-2; no longer reachable from cluster-4",
		"Normal ImportChanged: port http 8000/TCP -> 8001/TCP",
		"Normal ImportChanged: sessionAffinity None -> ClientIP",
	}, r)
}
