// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// targetLabels are the labels Prometheus adds to every series it scrapes;
// the binary never exposes them.
var targetLabels = []string{"instance", "job"}

// TestDashboardAndAlertsUseScrapedMetrics scrapes /metrics of a running
// loop that has done one ordinary cycle with an export in it, and checks
// every query of the Grafana dashboard and every alert against it: each
// metric is exposed, each label a query matches or groups by is one of its
// labels, and each label value a query picks out (outcome="error",
// action=~"refused|failed") is a series that exists already. A counter
// series born at its first increment is invisible to increase() and
// rate(), so an alert on it would miss the first failures.
func TestDashboardAndAlertsUseScrapedMetrics(t *testing.T) {
	w := newWorld(t, 2, "    minCommitInterval: \"0\"\n")
	ctx := context.Background()
	for _, m := range w.members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "httpbin"))
	}
	addr := runLoop(t, w)
	eventually(t, 20*time.Second, func() bool { code, _ := httpGet(t, "http://"+addr+"/readyz"); return code == 200 },
		"not ready after the first cycle")
	export(t, w.member("cluster-1"), "httpbin", "httpbin", 80, "10.1.0.10")
	eventually(t, 20*time.Second, func() bool {
		return exists(w.member("cluster-2").Client, &mcsv1alpha1.ServiceImport{}, "httpbin", "httpbin")
	}, "ServiceImport not in cluster-2")
	code, body := httpGet(t, "http://"+addr+"/metrics")
	require.Equal(t, 200, code)
	exposed := parseExposition(t, body)

	queries := map[string]string{}
	for name, expr := range dashboardQueries(t) {
		queries["dashboard: "+name] = expr
	}
	for name, expr := range alertQueries(t) {
		queries["alert "+name] = expr
	}
	require.Greater(t, len(queries), 25)
	for where, expr := range queries {
		checkQuery(t, where, expr, exposed)
	}
}

// series is one exposed metric: its label names, and the values each
// takes among the scraped series.
type series map[string]map[string]bool

func parseExposition(t *testing.T, body string) map[string]series {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	out := map[string]series{}
	for name, f := range families {
		s := series{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if s[l.GetName()] == nil {
					s[l.GetName()] = map[string]bool{}
				}
				s[l.GetName()][l.GetValue()] = true
			}
		}
		out[name] = s
		// A histogram is scraped as _bucket (with le), _sum and _count.
		if f.GetType() == dto.MetricType_HISTOGRAM {
			bucket := series{"le": {"+Inf": true}}
			for k, v := range s {
				bucket[k] = v
			}
			out[name+"_bucket"], out[name+"_sum"], out[name+"_count"] = bucket, s, s
		}
	}
	return out
}

func checkQuery(t *testing.T, where, expr string, exposed map[string]series) {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if !assert.NoError(t, err, "%s: %s", where, expr) {
		return
	}
	var selected []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		s, ok := exposed[vs.Name]
		if !assert.True(t, ok, "%s: %s is not exposed by the binary", where, vs.Name) {
			return nil
		}
		selected = append(selected, vs.Name)
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel {
				continue
			}
			values, ok := s[m.Name]
			if !assert.True(t, ok, "%s: %s has no label %s", where, vs.Name, m.Name) {
				continue
			}
			for _, want := range literals(m) {
				assert.True(t, values[want], "%s: no series %s{%s=%q} before the first event: increase() and rate() miss the first one (exposed: %v)",
					where, vs.Name, m.Name, want, keysOf(values))
			}
		}
		return nil
	})
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		agg, ok := node.(*parser.AggregateExpr)
		if !ok || agg.Without {
			return nil
		}
		for _, l := range agg.Grouping {
			found := slices.Contains(targetLabels, l)
			parser.Inspect(agg.Expr, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok && exposed[vs.Name][l] != nil {
					found = true
				}
				return nil
			})
			assert.True(t, found, "%s: groups by %s, which none of its metrics has", where, l)
		}
		return nil
	})
	assert.NotEmpty(t, selected, "%s: selects no metric", where)
}

// literals are the values a matcher names outright: the value of =, the
// alternatives of a =~ made only of them.
func literals(m *labels.Matcher) []string {
	switch m.Type {
	case labels.MatchEqual:
		return []string{m.Value}
	case labels.MatchRegexp:
		if regexp.MustCompile(`^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$`).MatchString(m.Value) {
			return strings.Split(m.Value, "|")
		}
	}
	return nil
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// dashboardQueries are the dashboard's PromQL, by panel and refId, with
// Grafana's variables given the values Grafana would.
func dashboardQueries(t *testing.T) map[string]string {
	var d struct {
		Panels []struct {
			Title, Type string
			Targets     []struct{ RefID, Expr string }
		}
	}
	b, err := os.ReadFile(filepath.Join(chartDir, "files/dashboard.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &d))
	out := map[string]string{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, q := range p.Targets {
			out[p.Title+" "+q.RefID] = strings.NewReplacer("$__rate_interval", "1m", "$__range", "1h").Replace(q.Expr)
		}
	}
	return out
}

// alertQueries are the alerts' expressions, by alert.
func alertQueries(t *testing.T) map[string]string {
	var groups struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	b, err := os.ReadFile(filepath.Join(chartDir, "files/prometheusrule-groups.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &groups))
	out := map[string]string{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = r.Expr
		}
	}
	return out
}
