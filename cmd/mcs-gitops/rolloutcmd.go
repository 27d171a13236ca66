// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
)

func newRolloutCommand() *cobra.Command {
	var f loopFlags
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "List the staged rollouts in progress; resume a paused one, or abort one",
		Long: `A staged rollout (spec.rollout in clusterset.yaml) brings a change to a
service (a new import, a port, type or family change, a new exporter) to
the members wave by wave, each wave its own commit. The loop commits the
next wave once the last one's gates have held for its soak time, and pauses
when a gate fails. status/rollouts.yaml on the branch records where each
rollout stands (docs/reach-and-rollout.md).

resume and abort make one commit on the branch that sets the rollout's
request in status/rollouts.yaml, as a person could by hand; the loop acts
on it when it next follows the branch (within a minute) and records it.
Abort leaves every member as it was before the change until the service's
exports change again.

Exit codes: 0 done; 1 no such rollout, or it is not in a state the request
applies to; 2 invalid config or flags; 3 the repository could not be read
or pushed.`,
		Example: `  mcs-gitops rollout list --config clusterset.yaml
  mcs-gitops rollout resume shop/cart --config clusterset.yaml
  mcs-gitops rollout abort shop/cart --config clusterset.yaml`,
	}
	// Every subcommand takes the loop's flags (--config, --repo, ...).
	flags := &cobra.Command{}
	f.register(flags, true)
	cmd.PersistentFlags().AddFlagSet(flags.Flags())
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "List the rollouts in progress: each one's wave, what it waits for, who is behind",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				repo, err := f.rolloutRepo(cmd, true)
				if err != nil {
					return err
				}
				st, err := readRollouts(repo)
				if err != nil {
					return &exitError{3, err}
				}
				writeRollouts(cmd.OutOrStdout(), st)
				return nil
			},
		},
		newRolloutRequestCommand(&f, rollout.Resume, "Resume a paused rollout: its wave's gates are checked again, and the waves go on"),
		newRolloutRequestCommand(&f, rollout.Abort, "Abort a rollout: every member back to the service as it was before the change"),
	)
	return cmd
}

func newRolloutRequestCommand(f *loopFlags, req rollout.Request, short string) *cobra.Command {
	return &cobra.Command{
		Use:   strings.ToLower(string(req)) + " NAMESPACE/NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			service := args[0]
			if strings.Count(service, "/") != 1 {
				return &exitError{2, fmt.Errorf("the service must be <namespace>/<name>, got %q", service)}
			}
			repo, err := f.rolloutRepo(cmd, false)
			if err != nil {
				return err
			}
			commit, err := requestRollout(cmd.Context(), repo, service, req)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s requested in %s (commit %s); the loop acts on it when it next follows the branch\n",
				service, req, layout.RolloutsFile, commit.String()[:12])
			return nil
		},
	}
}

func (f *loopFlags) rolloutRepo(cmd *cobra.Command, readOnly bool) (*gitsync.Repo, error) {
	ctx := cmd.Context()
	e, err := f.connect(ctx, cmd)
	if err != nil {
		return nil, err
	}
	f.readOnly = readOnly
	return f.openRepo(ctx, e)
}

func readRollouts(repo *gitsync.Repo) (*rollout.State, error) {
	head, err := repo.Head()
	if err != nil {
		return nil, err
	}
	data, err := repo.ReadFile(head, layout.RolloutsFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	st, err := rollout.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", layout.RolloutsFile, err)
	}
	return st, nil
}

// requestRollout commits req for service's rollout on the branch and
// pushes it, again on top of whatever won if the push is rejected.
func requestRollout(ctx context.Context, repo *gitsync.Repo, service string, req rollout.Request) (plumbing.Hash, error) {
	commit, _, err := gitsync.Publish(ctx, repo, 3, func(context.Context) (map[string][]byte, []string, gitsync.Message, error) {
		st, err := readRollouts(repo)
		if err != nil {
			return nil, nil, nil, err
		}
		r := st.Find(service)
		switch {
		case r == nil:
			return nil, nil, nil, &exitError{1, fmt.Errorf("no rollout of %s is in progress (%s)", service, layout.RolloutsFile)}
		case req == rollout.Resume && r.Paused == nil:
			return nil, nil, nil, &exitError{1, fmt.Errorf("the rollout of %s is not paused: nothing to resume", service)}
		case req == rollout.Abort && r.Aborted:
			return nil, nil, nil, &exitError{1, fmt.Errorf("the rollout of %s is aborted already", service)}
		}
		r.Request = req
		b, err := rollout.Format(st)
		if err != nil {
			return nil, nil, nil, err
		}
		msg := fmt.Sprintf("request: %s the rollout of %s\n\nRequested with mcs-gitops rollout %s.\n", strings.ToLower(string(req)), service, strings.ToLower(string(req)))
		return map[string][]byte{layout.RolloutsFile: b}, []string{layout.RolloutsFile}, gitsync.StaticMessage(msg), nil
	})
	var ee *exitError
	if errors.As(err, &ee) {
		return plumbing.ZeroHash, ee
	}
	if err != nil {
		return plumbing.ZeroHash, &exitError{3, err}
	}
	return commit, nil
}

func writeRollouts(w io.Writer, st *rollout.State) {
	if len(st.Rollouts) == 0 {
		fmt.Fprintln(w, "No staged rollout is in progress.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tKINDS\tWAVE\tSTATE\tBEHIND")
	for _, r := range st.Rollouts {
		state := r.StateName()
		if r.Paused != nil {
			state = r.Paused.String()
		}
		kinds := make([]string, len(r.Kinds))
		for i, k := range r.Kinds {
			kinds[i] = string(k)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d of %d (%s)\t%s\t%s\n", r.Service, strings.Join(kinds, ","), r.Reached, len(r.Waves), r.Current().Name,
			state, orDash(strings.Join(r.Behind(), ",")))
	}
	tw.Flush()
}
