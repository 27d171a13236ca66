// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
)

// Commit verification (spec.git.verify, docs/signing.md) happens in
// gitsync: Publish verifies HEAD before every render on top of it (after
// the clone's fetch and after every reset), so a cycle whose HEAD does
// not verify renders, commits, pushes and applies nothing and returns
// the *gitsync.VerifyError (inside a *RepoError); ApplyRef verifies the
// commit before it reads anything from it. This file holds ApplyRef's
// check and the metrics.

// verify refuses commit, before anything is applied from it, unless the
// repository's verifier accepts it (always, without spec.git.verify).
func (l *Loop) verify(commit plumbing.Hash) error {
	err := l.Repo.Verify(commit)
	var ve *gitsync.VerifyError
	if errors.As(err, &ve) {
		l.log().Error("commit refused: signature verification failed", "commit", commit.String()[:12],
			"refused", ve.Commit.String()[:12], "reason", string(ve.Reason), "err", err)
	}
	return err
}

// newVerificationMetrics are the series of commit verification: the
// refusals by reason, and whether the last verification refused.
func newVerificationMetrics() (*prometheus.CounterVec, prometheus.Gauge) {
	failures := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcs_gitops_commit_verification_failures_total",
		Help: "Commits refused because they, or a commit below them, are not signed by a key in spec.git.verify, by reason: unsigned, unknown_key, bad_signature, too_deep, unreadable.",
	}, []string{"reason"})
	for _, r := range gitsync.VerifyReasons {
		failures.WithLabelValues(string(r))
	}
	refused := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mcs_gitops_commit_verification_refused",
		Help: "1 while the last commit verification refused its commit (nothing was applied or committed on top), else 0.",
	})
	return failures, refused
}

// WatchVerification makes m count every verification of repo: those
// Publish makes of HEAD in each cycle, and ApplyRef's. m may be nil.
func (m *Metrics) WatchVerification(repo *gitsync.Repo) {
	v := repo.Verifier()
	if m == nil || v == nil {
		return
	}
	v.Observe = m.observeVerification
}

func (m *Metrics) observeVerification(err error) {
	var ve *gitsync.VerifyError
	if !errors.As(err, &ve) {
		m.VerificationRefused.Set(0)
		return
	}
	m.VerificationFailures.WithLabelValues(string(ve.Reason)).Inc()
	m.VerificationRefused.Set(1)
}
