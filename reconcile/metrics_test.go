package reconcile

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// The gauges count what SUMMARY.md lists as problems, by kind, and every
// kind is set, to zero when there is none, so a resolved problem clears.
func TestObserveReportCountsProblemsByKind(t *testing.T) {
	cond := func(typ, status, reason string) render.Condition {
		return render.Condition{Type: typ, Status: status, Reason: reason}
	}
	l := &Loop{Metrics: NewMetrics()}
	l.observeReport(&render.Report{Services: []render.ServiceReport{{
		Namespace: "web", Name: "api",
		Exports: []render.ExportReport{
			{Member: "a", Conditions: []render.Condition{cond("Valid", "True", "Valid"), cond("Conflict", "True", "PortConflict"), cond("Ready", "False", "NoEndpoints")}},
			{Member: "b", Conditions: []render.Condition{cond("Valid", "False", "NoService")}},
		},
		ImportedBy:       []string{"a", "b"},
		MissingNamespace: []string{"c"},
	}}})
	want := map[render.ProblemKind]float64{render.ProblemInvalid: 1, render.ProblemConflict: 1, render.ProblemNotReady: 1, render.ProblemMissingNamespace: 1}
	for _, k := range render.ProblemKinds {
		assert.Equal(t, want[k], testutil.ToFloat64(l.Metrics.Problems.WithLabelValues(string(k))), "kind %s", k)
	}
	assert.Equal(t, 1.0, testutil.ToFloat64(l.Metrics.Conflicts))
	assert.Equal(t, 2.0, testutil.ToFloat64(l.Metrics.Exports))

	l.observeReport(&render.Report{})
	for _, k := range render.ProblemKinds {
		assert.Zero(t, testutil.ToFloat64(l.Metrics.Problems.WithLabelValues(string(k))), "kind %s after it cleared", k)
	}
}
