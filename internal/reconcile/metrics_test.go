// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
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

// A member's reachability is one stable series, and why it failed is a
// state set: exactly the class of the last failed read is 1, every class
// 0 once it answers again, so a resolved failure clears. The last-read
// time moves only on a successful read.
func TestObserveMemberReasonAndLastRead(t *testing.T) {
	now := time.Unix(1700000000, 0)
	l := &Loop{Metrics: NewMetrics(), Now: func() time.Time { return now }}
	m := l.Metrics
	reasons := func() map[string]float64 {
		got := map[string]float64{}
		for _, r := range clusters.Reasons {
			got[r] = testutil.ToFloat64(m.MemberUnreachableReason.WithLabelValues("a", r))
		}
		return got
	}
	only := func(reason string) map[string]float64 {
		want := map[string]float64{}
		for _, r := range clusters.Reasons {
			want[r] = 0
		}
		if reason != "" {
			want[reason] = 1
		}
		return want
	}

	l.observeMember(clusters.Result{Member: "a", Took: 2 * time.Second})
	assert.Equal(t, 1.0, testutil.ToFloat64(m.MemberReachable.WithLabelValues("a")))
	assert.Equal(t, only(""), reasons())
	assert.Equal(t, 1700000000.0, testutil.ToFloat64(m.MemberLastRead.WithLabelValues("a")))

	now = now.Add(time.Minute)
	l.observeMember(clusters.Result{Member: "a", Err: errors.New("no answer"), Reason: clusters.ReasonTimeout, Took: 5 * time.Second})
	assert.Zero(t, testutil.ToFloat64(m.MemberReachable.WithLabelValues("a")))
	assert.Equal(t, only(clusters.ReasonTimeout), reasons())
	assert.Equal(t, 1700000000.0, testutil.ToFloat64(m.MemberLastRead.WithLabelValues("a")), "a failed read is not a read")

	l.observeMember(clusters.Result{Member: "a", Err: errors.New("401"), Reason: clusters.ReasonUnauthorized})
	assert.Equal(t, only(clusters.ReasonUnauthorized), reasons(), "the previous reason is reset")

	now = now.Add(time.Minute)
	l.observeMember(clusters.Result{Member: "a"})
	assert.Equal(t, only(""), reasons())
	assert.Equal(t, 1700000120.0, testutil.ToFloat64(m.MemberLastRead.WithLabelValues("a")))

	// Every read is timed, failed ones included: 2s, 5s, 0s, 0s.
	h := &dto.Metric{}
	require.NoError(t, m.MemberReadDuration.WithLabelValues("a").(prometheus.Histogram).Write(h))
	assert.Equal(t, uint64(4), h.GetHistogram().GetSampleCount())
	assert.Equal(t, 7.0, h.GetHistogram().GetSampleSum())
}

// Failed objects are what the member did not take in its last apply, a
// gauge: refusals of every kind count, and a clean apply clears it.
func TestObserveApplyFailedObjects(t *testing.T) {
	l := &Loop{Metrics: NewMetrics()}
	l.observeApply([]*apply.Result{{Member: "a", Created: []string{"x"},
		Collisions: []string{"Service/web/derived-1"},
		Refused:    []apply.Refusal{{Object: "Service/web/derived-1"}, {Object: "EndpointSlice/web/s"}, {Object: "ServiceImport/web/api"}}}})
	assert.Equal(t, 3.0, testutil.ToFloat64(l.Metrics.MemberFailedObjects.WithLabelValues("a")))
	l.observeApply([]*apply.Result{{Member: "a", Unchanged: []string{"x"}}})
	assert.Zero(t, testutil.ToFloat64(l.Metrics.MemberFailedObjects.WithLabelValues("a")))
}

// A cycle is successful when it published and applied to every member it
// read; an unreadable member or a refused object does not change that,
// an apply that failed or a publish that failed does.
func TestOutcomeSuccessful(t *testing.T) {
	report := &render.Report{}
	for _, c := range []struct {
		name string
		out  Outcome
		want bool
	}{
		{"all applied", Outcome{Report: report, Applied: []*apply.Result{{Member: "a"}, {Member: "b"}}}, true},
		{"a member unreadable", Outcome{Report: report, Collected: []clusters.Result{{Member: "b", Err: errors.New("down"), Reason: clusters.ReasonUnreachable}},
			Applied: []*apply.Result{{Member: "a"}}}, true},
		{"an object refused", Outcome{Report: report, Applied: []*apply.Result{{Member: "a", Refused: []apply.Refusal{{Object: "Service/web/x"}}}}}, true},
		{"an apply failed", Outcome{Report: report, Applied: []*apply.Result{{Member: "a"}, {Member: "b", Err: errors.New("build")}}}, false},
		{"publish failed", Outcome{}, false},
	} {
		assert.Equal(t, c.want, c.out.Successful(), c.name)
	}
}
