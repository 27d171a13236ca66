// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
)

func newApplyCommand() *cobra.Command {
	var f loopFlags
	var ref string
	var allowEmpty bool
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Apply what a commit of the rendered repository holds to every member",
		Long: `Apply server-side-applies clusters/<member>/ of the given commit to each member
and writes the status recorded in that commit's status/ back, without reading
exports or committing anything. Use it to roll back (apply an older commit) or
to apply a commit reviewed in a pull request. Objects this tool applied before
and the commit no longer holds are pruned; nothing else is touched.

Only what the renderer could have written is applied: an object of
clusters/<member>/ outside those shapes (an EndpointSlice for a Service the
commit does not render, a Service with externalIPs or node ports, a route
to another Gateway, a labelled Namespace) is refused before anything is
sent, named, and counted as a member problem; the rest is applied.

A commit without clusters/<member>/ for a configured member (the initial
commit, another branch, a repository that is not a rendered one) would prune
every import there: that member is refused and left alone, with the list of
what it would delete, unless --allow-empty is given, and then every object
deleted is printed.

With spec.git.verify, the commit, and every commit below it since the
loop's last signed one, must be signed by a key listed there: otherwise
nothing is applied and it exits 1 naming the commit, its author and why
(docs/signing.md).

` + loopExitCodes,
		Example: `  # re-apply the current HEAD
  mcs-gitops apply --config clusterset.yaml --repo . --ref HEAD

  # roll every member back to an earlier commit
  mcs-gitops apply --config clusterset.yaml --repo . --ref 3f2c9a1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, loop, err := f.openLoop(cmd, nil)
			if err != nil {
				return err
			}
			hash, err := loop.Repo.Resolve(ref)
			if err != nil {
				return &exitError{2, fmt.Errorf("--ref %s: %w", ref, err)}
			}
			results, err := loop.ApplyRef(cmd.Context(), hash, allowEmpty)
			loop.CloseEvents(eventsFlush)
			printOutcome(cmd.OutOrStdout(), &reconcile.Outcome{Applied: results})
			for _, r := range results {
				for _, d := range r.Deleted {
					fmt.Fprintf(cmd.OutOrStdout(), "%-20s deleted %s\n", r.Member, d)
				}
			}
			return loopExit(err)
		},
	}
	f.register(cmd, true)
	cmd.Flags().StringVar(&ref, "ref", "HEAD", "commit, branch or tag to apply")
	cmd.Flags().BoolVar(&allowEmpty, "allow-empty", false, "apply even where the commit has no directory for a member, pruning everything mcs-gitops applied there")
	return cmd
}
