// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

const loopExitCodes = `Exit codes: 0 every member read and applied; 1 the commit landed but some
member could not be read or applied, refused an object, or holds an object
that does not load (each named on stderr; everything else is done), or
the commit to apply (or one below it) is not signed by a key in
spec.git.verify (named on stderr; nothing was applied or committed); 2
invalid config, flags or input, a member's kubeconfig file that is missing,
does not parse or lacks the context included (nothing was committed); 3 the
repository could not be cloned, committed to or pushed (nothing was
applied).`

func newSyncCommand() *cobra.Command {
	var (
		f           loopFlags
		pushgateway string
	)
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Run one cycle: collect, render, commit, push, apply",
		Long: `Sync runs the loop once, the CronJob mode. It reads the ServiceExports,
exported Services, their EndpointSlices and the Namespaces of every member in
parallel, renders every member's ServiceImports, derived Services and
EndpointSlices on top of the repository's last commit, commits when a byte
changed (the message says what: which imports appeared, went or changed, and
any conflict), pushes (on a rejected push it fetches, re-renders and retries),
then server-side-applies that commit to every member it could read and writes
export and import status back.

A member that cannot be read keeps its last committed snapshot, so its
exports stay imported elsewhere (see spec.sync.staleAfter). One object never
stops the others: a live object that does not load is left out and its
export reported Valid=False (Unloadable); a rendered object a member refuses
is left out of that member only, and reported on the export's Ready
condition.

With spec.review.enabled (review mode, docs/review-mode.md) a change to who
can reach what (a new export or importer, a conflict, a traffic policy) is
not committed to the branch: it goes to a branch mcs-gitops/proposals/<name>
with a pull or merge request on the forge, and is applied once a person
merges it; endpoint churn still goes straight to the branch. Sync first asks
the forge about open proposals and fetches the branch, so a run applies
whatever was merged since the last one, and records a request it opened.

Its "cycle done" log line, the last but for the push's, carries what the
controller's metrics say: the outcome, the duration, whether the cycle was successful and when
(last_successful_cycle), and per member the read time, reachability (with
the reason class) and the objects it did not take. With --pushgateway the
metrics are also pushed to a Prometheus Pushgateway under the job
"mcs-gitops-sync", each run replacing the last; a failed push is logged
and does not change the exit code.

` + loopExitCodes,
		Example: `  # one cycle against the repository in ./platform-mcs
  mcs-gitops sync --config platform-mcs/clusterset.yaml --repo platform-mcs

  # in a CronJob: clone spec.git.url, credentials from Secrets in the management cluster
  mcs-gitops sync --config /etc/mcs-gitops/clusterset.yaml --workdir /var/lib/mcs-gitops`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var m *reconcile.Metrics
			if pushgateway != "" {
				m = reconcile.NewMetrics()
				// While it runs, the CronJob is the only writer: what the
				// controller's leader is, so the alerts that look at the
				// leader look at it.
				m.IsLeader.Set(1)
			}
			e, loop, err := f.openLoop(cmd, m)
			if err != nil {
				return err
			}
			if err := f.withReview(cmd.Context(), e, loop); err != nil {
				return err
			}
			out, err := loop.Sync(cmd.Context())
			if err == nil && out.Again {
				// Review mode opened a request: one more cycle records its
				// URL on the branch and on the export's status.
				out, err = loop.Sync(cmd.Context())
			}
			loop.CloseEvents(eventsFlush)
			printOutcome(cmd.OutOrStdout(), out)
			if m != nil {
				pushMetrics(cmd.Context(), pushgateway, m, e.log)
			}
			return loopExit(err)
		},
	}
	f.register(cmd, true)
	f.registerApply(cmd)
	cmd.Flags().StringVar(&pushgateway, "pushgateway", "", `URL of a Prometheus Pushgateway to push this run's metrics to, under job "mcs-gitops-sync"`)
	return cmd
}

// pushJob is the Pushgateway job the CronJob's metrics go to.
const pushJob = "mcs-gitops-sync"

// pushMetrics replaces the metrics of the last run on the Pushgateway
// with this run's. A failure is logged, not returned: the sync itself
// is done, and its exit code says how it went.
func pushMetrics(ctx context.Context, url string, m *reconcile.Metrics, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := push.New(url, pushJob).Gatherer(m.Registry).PushContext(ctx)
	if err != nil {
		// The error quotes the URL, which may carry a password.
		log.Error("pushing metrics failed", "job", pushJob, "err", redact.Error(err))
		return
	}
	log.Info("metrics pushed", "job", pushJob)
}

// loopExit maps a cycle's error to the documented exit codes.
func loopExit(err error) error {
	if err == nil {
		return nil
	}
	var partial *reconcile.PartialError
	if errors.As(err, &partial) {
		return &exitError{1, err}
	}
	// Checked before RepoError, which wraps it when a cycle's HEAD is
	// refused: the repository works, its content is not trusted.
	var refused *gitsync.VerifyError
	if errors.As(err, &refused) {
		return &exitError{1, err}
	}
	var repo *reconcile.RepoError
	if errors.As(err, &repo) {
		return &exitError{3, err}
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{1, err}
}

func printOutcome(w io.Writer, out *reconcile.Outcome) {
	if out == nil {
		return
	}
	if out.Committed {
		fmt.Fprintf(w, "committed %s\n", out.Commit.String()[:12])
	} else if !out.Commit.IsZero() {
		fmt.Fprintf(w, "no change; at %s\n", out.Commit.String()[:12])
	}
	for _, r := range out.Collected {
		if r.Err != nil {
			fmt.Fprintf(w, "%-20s not read (%s): using its last committed snapshot\n", r.Member, r.Reason)
		}
	}
	for _, a := range out.Applied {
		if a.Err != nil {
			fmt.Fprintf(w, "%-20s apply failed: %v\n", a.Member, a.Err)
			continue
		}
		fmt.Fprintf(w, "%-20s created %d, configured %d, unchanged %d, deleted %d, skipped %d", a.Member,
			len(a.Created), len(a.Configured), len(a.Unchanged), len(a.Deleted), len(a.Skipped))
		if len(a.Refused) > 0 {
			fmt.Fprintf(w, ", not applied %d", len(a.Refused))
		}
		fmt.Fprintln(w)
	}
}
