package reconcile

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/buildinfo"
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

// /metrics says which build is serving it, with the labels `version`
// prints, so a dashboard can tell which version a member's state came from.
func TestBuildInfoMetric(t *testing.T) {
	labels := func(t *testing.T, r *prometheus.Registry) map[string]string {
		t.Helper()
		families, err := r.Gather()
		require.NoError(t, err)
		for _, f := range families {
			if f.GetName() != "mcs_gitops_build_info" {
				continue
			}
			require.Len(t, f.GetMetric(), 1)
			assert.Equal(t, 1.0, f.GetMetric()[0].GetGauge().GetValue())
			got := map[string]string{}
			for _, l := range f.GetMetric()[0].GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			return got
		}
		t.Fatal("no mcs_gitops_build_info")
		return nil
	}

	// A test binary of a library package records no module versions, so
	// the labels are checked on a build that has them all, each distinct.
	r := prometheus.NewRegistry()
	r.MustRegister(buildInfo(buildinfo.Info{
		Version: "v1.2.3", Revision: "0123abc", GoVersion: "go1.26.8",
		Modules: map[string]string{"sigs.k8s.io/mcs-api": "v0.5.2", "sigs.k8s.io/gateway-api": "v1.6.3", "k8s.io/client-go": "v0.37.2"},
	}))
	assert.Equal(t, map[string]string{
		"version": "v1.2.3", "revision": "0123abc", "goversion": "go1.26.8", "mcs_api": "v0.5.2", "gateway_api": "v1.6.3",
	}, labels(t, r))

	got := labels(t, NewMetrics().Registry)
	assert.Equal(t, buildinfo.Read().Version, got["version"], "the registry run serves has this build's")
	assert.Equal(t, buildinfo.Read().GoVersion, got["goversion"])
}
