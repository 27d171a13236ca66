// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
)

func newRunCommand() *cobra.Command {
	var f loopFlags
	var (
		addr        string
		leaderElect bool
		leNamespace string
		leName      string
		grace       time.Duration
		liveness    int
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the controller: watch every member and sync on change",
		Long: `Run is the controller mode. It watches ServiceExports, Services,
EndpointSlices, Namespaces and ClusterProperties in every member and runs a
sync cycle after a change: changes within spec.sync.debounce join one cycle,
and at most one commit lands per spec.sync.minCommitInterval so endpoint
churn does not make a commit per pod. A full cycle also runs every
spec.sync.resyncInterval to repair drift.

In review mode (spec.review.enabled, docs/review-mode.md) structural changes
go to proposal branches and pull or merge requests instead of the branch;
every spec.review.pollInterval, after a cycle has applied, it asks the forge
about open proposals and fetches the branch, and a merge found there is
applied in the next cycle, started at once.

It follows its inputs without a restart: when the config file changes (a
mounted ConfigMap updated, a member added) or a Secret it reads credentials
from changes (a member joined with ` + "`mcs-gitops member join`" + `, a token
rotated), or when the cluster inventory's ClusterProfiles (spec.inventory,
watched, and listed every 5s) give another membership, health or access, it
lets a cycle in progress finish, reads the config again, reconnects every
member and goes on. A config that does not load, or names
a member kubeconfig file that is missing, does not parse or lacks its
context, is logged and the running one kept; at start it exits 2.

With --leader-elect (the default when a management cluster is known) only the
replica holding the Lease commits and applies; the others stand by.

It serves /metrics (Prometheus), /healthz and /readyz (ready after the first
cycle, or while standing by) on --metrics-addr. /healthz fails while this
replica leads and no cycle has completed for --liveness-cycles times
spec.sync.resyncInterval (never less than one interval plus the longest a
cycle may take), so a wedged cycle gets the pod restarted. On SIGTERM or SIGINT it lets
a cycle in progress finish within --grace, releases the Lease and exits 0.`,
		Example: `  # locally, against the repository in ./platform-mcs
  mcs-gitops run --config platform-mcs/clusterset.yaml --repo platform-mcs --leader-elect=false

  # in a Deployment (see deploy/)
  mcs-gitops run --config /etc/mcs-gitops/clusterset.yaml --workdir /var/lib/mcs-gitops`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if liveness < 0 {
				return &exitError{2, fmt.Errorf("--liveness-cycles must be 0 (off) or more, got %d", liveness)}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			e, err := f.connect(ctx, cmd)
			if err != nil {
				return err
			}
			if _, err := lineageStore(f.lineage, e.mgmt); err != nil {
				return err
			}
			m := reconcile.NewMetrics()
			probes := &reconcile.Probes{}
			bound, served, err := reconcile.Serve(ctx, addr, m, probes)
			if err != nil {
				return &exitError{2, fmt.Errorf("--metrics-addr: %w", err)}
			}
			e.log.Info("serving metrics and probes", "addr", bound)

			lead := func(ctx context.Context) error {
				return f.runReloading(ctx, e, func(ctx context.Context) (*env, error) { return f.connect(ctx, cmd) },
					func(ctx context.Context, e *env, reload func(string)) error {
						repo, err := f.openRepo(ctx, e)
						if err != nil {
							return err
						}
						if err := e.joinCommittedInventory(ctx, repo); err != nil {
							return err
						}
						if e.inventory != nil {
							go e.watchInventory(ctx, reload, m)
						}
						loop := e.loop(repo, m)
						loop.Fence = f.fence
						if err := f.keepLineage(e, loop); err != nil {
							return err
						}
						defer loop.CloseEvents(eventsFlush)
						if err := f.withReview(ctx, e, loop); err != nil {
							return err
						}
						return loop.Run(ctx, reconcile.RunOptions{
							Grace: grace, Ready: func() { probes.SetReady(true) },
							Probes: probes, LivenessCycles: liveness,
						})
					})
			}
			if !cmd.Flags().Changed("leader-elect") {
				leaderElect = e.mgmtConfig != nil
			}
			if leaderElect && e.mgmtConfig == nil {
				return &exitError{2, fmt.Errorf("--leader-elect needs a management cluster: pass --management-kubeconfig or run in-cluster")}
			}
			var runErr error
			if leaderElect {
				probes.SetReady(true) // a follower standing by is healthy
				runErr = reconcile.Lead(ctx, reconcile.LeaderElection{Config: e.mgmtConfig, Namespace: leNamespace, Name: leName}, m,
					func(ctx context.Context, fence reconcile.Fence) {
						f.fence = fence
						probes.SetReady(false)
						if err := lead(ctx); err != nil {
							runErr = err
							stop()
						}
					})
			} else {
				m.IsLeader.Set(1)
				runErr = lead(ctx)
			}
			stop()
			if err := <-served; err != nil && runErr == nil {
				runErr = err
			}
			return loopExit(runErr)
		},
	}
	f.register(cmd, true)
	f.registerApply(cmd)
	fl := cmd.Flags()
	fl.StringVar(&addr, "metrics-addr", ":8080", "address serving /metrics, /healthz and /readyz")
	fl.BoolVar(&leaderElect, "leader-elect", true, "hold a Lease in the management cluster so only one replica commits (default true when a management cluster is known)")
	fl.StringVar(&leNamespace, "leader-election-namespace", "mcs-gitops", "namespace of the leader Lease")
	fl.StringVar(&leName, "leader-election-id", "mcs-gitops", "name of the leader Lease")
	fl.IntVar(&liveness, "liveness-cycles", 3, "fail /healthz when, while leading, no cycle has completed for this many resync intervals (0: never)")
	fl.DurationVar(&grace, "grace", 30*time.Second, "how long a cycle in progress may run after a shutdown signal")
	return cmd
}
