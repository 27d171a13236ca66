// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Metrics are what run exposes on /metrics. Gauges describe the last
// completed cycle; counters accumulate over the process's life.
type Metrics struct {
	Registry *prometheus.Registry

	CycleDuration   *prometheus.HistogramVec
	PhaseDuration   *prometheus.HistogramVec
	Cycles          *prometheus.CounterVec
	Commits         prometheus.Counter
	PushRetries     prometheus.Counter
	PublishRetries  prometheus.Counter
	BranchDrift     prometheus.Counter
	BranchRefused   prometheus.Gauge
	WithdrawalsHeld prometheus.Gauge
	// InventoryMembers and InventoryHeld are set by the command layer,
	// which puts the cluster inventory's membership in force.
	InventoryMembers prometheus.Gauge
	InventoryHeld    prometheus.Gauge
	// Rollouts are the staged rollouts in progress, by state.
	Rollouts        *prometheus.GaugeVec
	ApplyResults    *prometheus.CounterVec
	MemberReachable *prometheus.GaugeVec
	// MemberUnreachableReason is a state set: per member one series per
	// reason class, 1 for the class of the last failed read, all 0 while
	// the member answers. Series never appear or vanish as the reason
	// changes, so MemberReachable keeps one stable series an alert's
	// `for` can time, and the reason is joined on.
	MemberUnreachableReason *prometheus.GaugeVec
	MemberReadDuration      *prometheus.HistogramVec
	MemberLastRead          *prometheus.GaugeVec
	MemberFailedObjects     *prometheus.GaugeVec
	LastSuccessfulCycle     prometheus.Gauge
	Exports                 prometheus.Gauge
	Imports                 prometheus.Gauge
	Conflicts               prometheus.Gauge
	Problems                *prometheus.GaugeVec
	IsLeader                prometheus.Gauge
	// VerificationFailures and VerificationRefused are commit
	// verification's (verify.go).
	VerificationFailures *prometheus.CounterVec
	VerificationRefused  prometheus.Gauge
	// ReviewProposals and ReviewErrors are review mode's (review.go).
	ReviewProposals *prometheus.GaugeVec
	ReviewErrors    *prometheus.CounterVec
}

// NewMetrics registers the metrics on a fresh registry, along with the Go
// runtime and process collectors and the build's identity.
func NewMetrics() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		CycleDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcs_gitops_cycle_duration_seconds",
			Help:    "Duration of a sync cycle (collect, render, commit, push, apply), by outcome.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"outcome"}),
		PhaseDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcs_gitops_cycle_phase_seconds",
			Help:    "Duration of each phase of a sync cycle: read (list every member), publish (render, commit, push), apply (every member, in parallel).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"phase"}),
		Cycles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcs_gitops_cycles_total",
			Help: "Sync cycles run, by outcome: ok, partial (some member failed), error.",
		}, []string{"outcome"}),
		Commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcs_gitops_commits_total",
			Help: "Commits made to the rendered repository.",
		}),
		PushRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcs_gitops_push_retries_total",
			Help: "Pushes rejected by the remote and retried after a fetch and re-render.",
		}),
		PublishRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcs_gitops_publish_retries_total",
			Help: "Cycles that could not update the repository (the Git server down, say) and were retried after a backoff of 1s doubling to 1m, rather than at the next resync.",
		}),
		BranchDrift: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcs_gitops_branch_drift_total",
			Help: "Commits the loop did not write that changed rendered files (inputs/, clusters/, status/), found when following the branch; the loop renders over them. Merges of review-mode proposals do not count.",
		}),
		BranchRefused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcs_gitops_branch_refused",
			Help: "1 while the loop refuses its branch: rewritten (force-pushed, or gone with a clone that cannot push it back) below the last commit it pushed, or lacking the snapshot of a member it cannot read. Nothing is rendered or applied until the branch is mended or a person accepts it (mcs-gitops lineage accept).",
		}),
		WithdrawalsHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcs_gitops_withdrawals_held",
			Help: "Members the withdrawal guard holds after the last cycle: each would have withdrawn an unusual share of its exports at once and waits for a person to release it (status/members.yaml says how).",
		}),
		ApplyResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcs_gitops_apply_objects_total",
			Help: "Objects handled by apply, by member and action: created, configured, unchanged, deleted, skipped, refused (by the member, or a collision), failed.",
		}, []string{"member", "action"}),
		MemberReachable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcs_gitops_member_reachable",
			Help: "1 when the member could be read in the last cycle, else 0.",
		}, []string{"member"}),
		MemberUnreachableReason: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcs_gitops_member_unreachable_reason",
			Help: "Why the member's last read failed: one series per reason class (Unreachable, Timeout, Unauthorized, Forbidden, CRDMissing, Config, NotHealthy), 1 for the class of the last failed read, all 0 when it succeeded.",
		}, []string{"member", "reason"}),
		MemberReadDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcs_gitops_member_read_duration_seconds",
			Help:    "Duration of reading one member (listing it, or asking whether it is up when nothing changed), failed reads included.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"member"}),
		MemberLastRead: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcs_gitops_member_last_read_timestamp_seconds",
			Help: "Unix time of the member's last successful read by this process.",
		}, []string{"member"}),
		MemberFailedObjects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcs_gitops_member_failed_objects",
			Help: "Rendered objects the member did not take in its last apply: refused by its apiserver, outside the rendered contract, or a collision with a user's object.",
		}, []string{"member"}),
		LastSuccessfulCycle: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcs_gitops_last_successful_cycle_timestamp_seconds",
			Help: "Unix time the last successful cycle ended: the repository was updated (or already current) and every member that could be read was applied without error. Unreadable members and refused objects do not make a cycle unsuccessful; they have their own metrics.",
		}),
		Exports: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcs_gitops_exports",
			Help: "ServiceExports across all members in the last render.",
		}),
		Imports: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcs_gitops_imports",
			Help: "ServiceImports rendered across all members in the last render.",
		}),
		Conflicts: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcs_gitops_conflicts",
			Help: "Exported services with Conflict=True in the last render.",
		}),
		Problems: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcs_gitops_problems",
			Help: "Problems in the last render by kind, as status/SUMMARY.md lists them (Invalid, Conflict, NotReady, MissingNamespace, Warning, Policy).",
		}, []string{"kind"}),
		IsLeader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcs_gitops_leader",
			Help: "1 while this replica holds the leader Lease.",
		}),
	}
	m.VerificationFailures, m.VerificationRefused = newVerificationMetrics()
	m.ReviewProposals = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mcs_gitops_review_proposals",
		Help: "Review mode: structural changes held back after the last commit, by state: open (a request waits for review), opening (its request is not recorded yet), rejected (closed unmerged, not proposed again), overridden (imports taken out of a merged proposal by hand).",
	}, []string{"state"})
	m.ReviewErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcs_gitops_review_errors_total",
		Help: "Review mode: failed talks with the forge or pushes of proposal branches, by step (poll, propose). Churn keeps flowing; proposals are late.",
	}, []string{"step"})
	r.MustRegister(m.CycleDuration, m.PhaseDuration, m.Cycles, m.Commits, m.PushRetries, m.PublishRetries, m.BranchDrift, m.BranchRefused, m.WithdrawalsHeld, m.ApplyResults,
		m.MemberReachable, m.MemberUnreachableReason, m.MemberReadDuration, m.MemberLastRead, m.MemberFailedObjects, m.LastSuccessfulCycle, m.Exports, m.Imports, m.Conflicts, m.Problems, m.IsLeader,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfo(buildinfo.Read()))
	m.Rollouts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mcs_gitops_rollouts",
		Help: "Staged rollouts in progress after the last cycle, by state: rolling (a wave soaks or waits for its gates), paused (a gate failed; a person resumes or aborts it), aborted (every member as before the change until the exports change).",
	}, []string{"state"})
	m.InventoryMembers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcs_gitops_inventory_members",
		Help: "Members the cluster inventory (spec.inventory: ClusterProfiles) gives, as in force; 0 without an inventory.",
	})
	m.InventoryHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcs_gitops_inventory_held",
		Help: "1 while the cluster inventory lists no ClusterProfile, or cannot be listed, and the members in force are kept instead (nothing is withdrawn; a member whose profile is gone gets no new credential).",
	})
	r.MustRegister(m.VerificationFailures, m.VerificationRefused, m.ReviewProposals, m.ReviewErrors, m.Rollouts, m.InventoryMembers, m.InventoryHeld)
	// Every label value an alert or the dashboard picks out is a series
	// from the start: a counter born at its first increment, already at
	// 1, shows no increase() and its alert misses the first failures
	// (TestDashboardAndAlertsUseScrapedMetrics, TestAlertRules).
	for _, o := range []string{"ok", "partial", "error"} {
		m.Cycles.WithLabelValues(o)
	}
	for _, k := range render.ProblemKinds {
		m.Problems.WithLabelValues(string(k))
	}
	for _, s := range []string{"open", "opening", "rejected", "overridden"} {
		m.ReviewProposals.WithLabelValues(s)
	}
	for _, s := range rollout.States {
		m.Rollouts.WithLabelValues(s)
	}
	for _, s := range []string{"poll", "propose"} {
		m.ReviewErrors.WithLabelValues(s)
	}
	return m
}

// buildInfo is the conventional *_info gauge: always 1, the build in its
// labels, so a dashboard can join on it and an alert can name the version.
func buildInfo(i buildinfo.Info) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcs_gitops_build_info",
		Help: "Always 1; the labels say which build is running, as `mcs-gitops version` prints it.",
		ConstLabels: prometheus.Labels{
			"version":     i.Version,
			"revision":    i.Revision,
			"goversion":   i.GoVersion,
			"mcs_api":     i.Modules["sigs.k8s.io/mcs-api"],
			"gateway_api": i.Modules["sigs.k8s.io/gateway-api"],
		},
	})
	g.Set(1)
	return g
}
