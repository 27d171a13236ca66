// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
