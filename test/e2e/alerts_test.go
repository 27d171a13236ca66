// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAlertRules evaluates the alerts with Prometheus's own rule engine
// (what a Prometheus server and `promtool test rules` run) on synthetic
// series, a minute apart from time 0, the way promtool's unit tests
// describe them: each alert fires when it should, with the labels and the
// summary a person reads, and stays quiet when it should. Every alert in
// the file has a case that fires.
func TestAlertRules(t *testing.T) {
	p := parser.NewParser(promqltest.TestParserOpts)
	groups, errs := rulefmt.ParseFile(filepath.Join(chartDir, "files/prometheusrule-groups.yaml"), false, model.UTF8Validation, p, slog.Default())
	require.Empty(t, errs)
	defined := map[string]rulefmt.Rule{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			defined[r.Alert] = r
			for _, k := range []string{"summary", "description", "runbook"} {
				assert.NotEmpty(t, r.Annotations[k], "alert %s: annotation %s", r.Alert, k)
			}
		}
	}
	// A leader, as it exposes itself from its start.
	const leader = `mcs_gitops_leader 1x60
mcs_gitops_build_info{version="v0.1.0",revision="abc",goversion="go1.26.8",mcs_api="v0.3.0",gateway_api="v1.4.0"} 1x60
process_start_time_seconds 0x60
`
	type firing struct{ labels, summary string }
	cases := []struct {
		name, alert, series string
		at                  time.Duration
		want                []firing
	}{
		{"never succeeded since start", "McsGitopsNoSuccessfulCycle", leader + "mcs_gitops_last_successful_cycle_timestamp_seconds 0x60", 36 * time.Minute,
			[]firing{{`{alertname="McsGitopsNoSuccessfulCycle", severity="critical"}`, "No successful mcs-gitops cycle for 30 minutes."}}},
		{"not for 30 minutes yet", "McsGitopsNoSuccessfulCycle", leader + "mcs_gitops_last_successful_cycle_timestamp_seconds 0x60", 34 * time.Minute, nil},
		{"succeeding every minute", "McsGitopsNoSuccessfulCycle", leader + "mcs_gitops_last_successful_cycle_timestamp_seconds 0+60x60", 50 * time.Minute, nil},
		{"a standby never alerts", "McsGitopsNoSuccessfulCycle", strings.Replace(leader, "mcs_gitops_leader 1x60", "mcs_gitops_leader 0x60", 1) +
			"mcs_gitops_last_successful_cycle_timestamp_seconds 0x60", 50 * time.Minute, nil},

		{"a member times out", "McsGitopsMemberUnreachable", `mcs_gitops_member_reachable{member="cluster-1"} 1x30
mcs_gitops_member_reachable{member="cluster-2"} 0x30
mcs_gitops_member_unreachable_reason{member="cluster-1",reason="Timeout"} 0x30
mcs_gitops_member_unreachable_reason{member="cluster-2",reason="Timeout"} 1x30
mcs_gitops_member_unreachable_reason{member="cluster-2",reason="Unreachable"} 0x30`, 11 * time.Minute,
			[]firing{{`{alertname="McsGitopsMemberUnreachable", member="cluster-2", reason="Timeout", severity="warning"}`, "Member cluster-2 cannot be read (Timeout)."}}},
		{"a member back within 10 minutes", "McsGitopsMemberUnreachable", `mcs_gitops_member_reachable{member="cluster-2"} 0x5 1x20
mcs_gitops_member_unreachable_reason{member="cluster-2",reason="Timeout"} 1x5 0x20`, 20 * time.Minute, nil},

		{"conflicts that stay", "McsGitopsConflicts", "mcs_gitops_conflicts 2x30", 16 * time.Minute,
			[]firing{{`{alertname="McsGitopsConflicts", severity="warning"}`, "2 exported service(s) in conflict."}}},
		{"no conflict", "McsGitopsConflicts", "mcs_gitops_conflicts 0x30", 20 * time.Minute, nil},

		{"a member refuses objects", "McsGitopsObjectsRefused", `mcs_gitops_member_failed_objects{member="cluster-3"} 3x30
mcs_gitops_member_failed_objects{member="cluster-1"} 0x30`, 16 * time.Minute,
			[]firing{{`{alertname="McsGitopsObjectsRefused", member="cluster-3", severity="warning"}`, "Member cluster-3 did not take 3 rendered object(s)."}}},

		{"applies keep failing", "McsGitopsMemberApplyFailing", `mcs_gitops_apply_objects_total{action="failed",member="cluster-2"} 0+1x40
mcs_gitops_apply_objects_total{action="failed",member="cluster-1"} 0x40`, 31 * time.Minute,
			[]firing{{`{action="failed", alertname="McsGitopsMemberApplyFailing", member="cluster-2", severity="warning"}`, "Applying to member cluster-2 keeps failing."}}},
		// Why the binary exposes every failure counter at 0 from its
		// start: a series whose first sample is already 1 shows no
		// increase, and the first failures would never alert.
		{"a failure counter born at 1 is invisible", "McsGitopsMemberApplyFailing",
			`mcs_gitops_apply_objects_total{action="failed",member="cluster-2"} _x5 1x35`, 31 * time.Minute, nil},

		{"cycles keep failing", "McsGitopsCyclesFailing", "mcs_gitops_cycles_total{outcome=\"error\"} 0+1x40\nmcs_gitops_cycles_total{outcome=\"ok\"} 0x40", 31 * time.Minute,
			[]firing{{`{alertname="McsGitopsCyclesFailing", outcome="error", severity="critical"}`, "mcs-gitops cycles fail before applying anything."}}},
		{"one failed cycle long ago", "McsGitopsCyclesFailing", "mcs_gitops_cycles_total{outcome=\"error\"} 0 1x40", 40 * time.Minute, nil},

		{"a commit does not verify", "McsGitopsCommitRefused", "mcs_gitops_commit_verification_refused 0 1x10", 3 * time.Minute,
			[]firing{{`{alertname="McsGitopsCommitRefused", severity="critical"}`, "mcs-gitops refuses the branch's commit; its signature does not verify."}}},

		{"a withdrawal held", "McsGitopsWithdrawalHeld", leader + "mcs_gitops_withdrawals_held 0 1x10", 3 * time.Minute,
			[]firing{{`{alertname="McsGitopsWithdrawalHeld", severity="warning"}`, "mcs-gitops holds a withdrawal of exports for a person."}}},
		{"the standby's view of a withdrawal", "McsGitopsWithdrawalHeld", strings.Replace(leader, "mcs_gitops_leader 1x60", "mcs_gitops_leader 0x60", 1) +
			"mcs_gitops_withdrawals_held 1x10", 5 * time.Minute, nil},

		{"a rollout paused", "McsGitopsRolloutPaused", leader + `mcs_gitops_rollouts{state="paused"} 0 1x10`, 3 * time.Minute,
			[]firing{{`{alertname="McsGitopsRolloutPaused", severity="warning", state="paused"}`, "A staged rollout is paused on a failed gate."}}},
		{"the standby's view of a paused rollout", "McsGitopsRolloutPaused", strings.Replace(leader, "mcs_gitops_leader 1x60", "mcs_gitops_leader 0x60", 1) +
			`mcs_gitops_rollouts{state="paused"} 1x10`, 5 * time.Minute, nil},

		{"an inventory held past 10 minutes", "McsGitopsInventoryHeld", leader + "mcs_gitops_inventory_held 0 1x20", 13 * time.Minute,
			[]firing{{`{alertname="McsGitopsInventoryHeld", severity="warning"}`, "mcs-gitops holds the members of an inventory that lists none."}}},
		{"an inventory empty for a moment", "McsGitopsInventoryHeld", leader + "mcs_gitops_inventory_held 0 1x5 0x10", 13 * time.Minute, nil},
		{"the standby's view of a held inventory", "McsGitopsInventoryHeld", strings.Replace(leader, "mcs_gitops_leader 1x60", "mcs_gitops_leader 0x60", 1) +
			"mcs_gitops_inventory_held 1x20", 13 * time.Minute, nil},

		{"the branch was force-pushed", "McsGitopsBranchRefused", "mcs_gitops_branch_refused 0 1x10", 3 * time.Minute,
			[]firing{{`{alertname="McsGitopsBranchRefused", severity="critical"}`, "mcs-gitops refuses its branch; it was rewritten below the last commit pushed."}}},
		{"the branch mended", "McsGitopsBranchRefused", "mcs_gitops_branch_refused 0 1 0x10", 5 * time.Minute, nil},
	}
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	fired := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			def, ok := defined[tc.alert]
			require.True(t, ok, "no alert %s", tc.alert)
			storage := promqltest.LoadedStorage(t, "load 1m\n"+indent(tc.series))
			expr, err := p.ParseExpr(def.Expr)
			require.NoError(t, err)
			rule := rules.NewAlertingRule(def.Alert, expr, time.Duration(def.For), 0,
				labels.FromMap(def.Labels), labels.FromMap(def.Annotations), labels.EmptyLabels(), "", false, slog.New(slog.DiscardHandler))
			query := rules.EngineQueryFunc(engine, storage)
			for at := time.Duration(0); at <= tc.at; at += time.Minute {
				_, err := rule.Eval(context.Background(), 0, time.Unix(0, 0).Add(at), query, nil, 0)
				require.NoError(t, err)
			}
			var got []firing
			for _, a := range rule.ActiveAlerts() {
				if a.State == rules.StateFiring {
					got = append(got, firing{a.Labels.String(), a.Annotations.Get("summary")})
				}
			}
			assert.Equal(t, tc.want, got, "firing at %s", tc.at)
			if len(got) > 0 {
				fired[tc.alert] = true
			}
		})
	}
	for name := range defined {
		assert.True(t, fired[name], "alert %s has no case where it fires", name)
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
