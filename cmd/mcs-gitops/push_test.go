// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sync's last log line carries the figures the controller's metrics do,
// and --pushgateway pushes the metrics themselves under the job
// mcs-gitops-sync: the request's body holds this run's values. The one
// member is down: the run is partial, yet successful (the repository was
// updated and every member that could be read was applied, none).
func TestSyncLogsFiguresAndPushesMetrics(t *testing.T) {
	type pushed struct {
		method, path string
		families     map[string]*dto.MetricFamily
	}
	requests := make(chan pushed, 1)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := pushed{method: r.Method, path: r.URL.Path, families: map[string]*dto.MetricFamily{}}
		dec := expfmt.NewDecoder(r.Body, expfmt.ResponseFormat(r.Header))
		for {
			f := &dto.MetricFamily{}
			if err := dec.Decode(f); err != nil {
				if !errors.Is(err, io.EOF) {
					http.Error(w, err.Error(), http.StatusBadRequest)
				}
				break
			}
			p.families[f.GetName()] = f
		}
		requests <- p
		w.WriteHeader(http.StatusOK)
	}))
	defer gw.Close()

	cfg := writeConfig(t, "")
	repo := t.TempDir()
	_, err := git.PlainInit(repo, false)
	require.NoError(t, err)
	before := time.Now().Add(-time.Second)
	out, err := run(t, "sync", "--config", cfg, "--repo", repo, "--log-format", "json", "--pushgateway", gw.URL)
	assert.Equal(t, 1, exitCode(err), "output: %s", out)

	var done map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "cycle done" {
			done = line
		}
	}
	require.NotNil(t, done, "no cycle done line in %s", out)
	assert.Equal(t, "partial", done["outcome"])
	assert.NotEmpty(t, done["duration"])
	assert.Equal(t, true, done["successful"])
	last, err := time.Parse(time.RFC3339, done["last_successful_cycle"].(string))
	require.NoError(t, err)
	assert.False(t, last.Before(before.Truncate(time.Second)), "this run's time")
	down := done["members"].(map[string]any)["down"].(map[string]any)
	assert.Equal(t, false, down["reachable"])
	assert.Equal(t, "Unreachable", down["reason"])
	assert.NotEmpty(t, down["read"])
	assert.NotContains(t, down, "failed_objects", "not applied: it could not be read")

	var p pushed
	select {
	case p = <-requests: // the push is done before sync returns
	default:
		t.Fatal("nothing pushed")
	}
	assert.Equal(t, http.MethodPut, p.method, "each run replaces the last")
	assert.Equal(t, "/metrics/job/mcs-gitops-sync", p.path)
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f := p.families[name]
		require.NotNil(t, f, "%s not pushed", name)
	metrics:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue metrics
				}
			}
			switch {
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
		t.Fatalf("%s%v not pushed", name, labels)
		return 0
	}
	assert.Equal(t, 1.0, value("mcs_gitops_cycles_total", map[string]string{"outcome": "partial"}))
	assert.Equal(t, 0.0, value("mcs_gitops_member_reachable", map[string]string{"member": "down"}))
	assert.Equal(t, 1.0, value("mcs_gitops_member_unreachable_reason", map[string]string{"member": "down", "reason": "Unreachable"}))
	assert.Equal(t, 1.0, value("mcs_gitops_member_read_duration_seconds", map[string]string{"member": "down"}))
	assert.Equal(t, float64(last.Unix()), float64(int64(value("mcs_gitops_last_successful_cycle_timestamp_seconds", nil))))
	assert.Equal(t, 1.0, value("mcs_gitops_leader", nil))
	assert.Contains(t, p.families, "process_start_time_seconds", "the alert on no successful cycle falls back to it")
}

// A Pushgateway that refuses the push is logged; the exit code is the
// sync's.
func TestSyncPushFailureIsLogged(t *testing.T) {
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer gw.Close()
	cfg := writeConfig(t, "")
	repo := t.TempDir()
	_, err := git.PlainInit(repo, false)
	require.NoError(t, err)
	out, err := run(t, "sync", "--config", cfg, "--repo", repo, "--pushgateway", gw.URL)
	assert.Equal(t, 1, exitCode(err), "the member is down: 1, as without a push")
	assert.Contains(t, out, "pushing metrics failed")
}
