// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/fleetstatus"
)

func newStatusCommand() *cobra.Command {
	var (
		f       loopFlags
		member  string
		service string
		output  string
		wait    string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the ClusterSet: members, and per service its exporters, importers and last change",
		Long: `Status joins the repository's last commit with a live read of every member.

Per member: reachable now (with the apiserver version, or why not), since
when the last commit records it unreachable, and doctor's identity and CRD
checks (who the credential is, when its token expires, the CRDs served). Per exported service: the
ServiceImport type, each exporter's conditions and ready endpoints, each
importing member and whether it holds the ServiceImport now and with which
addresses, warnings, and the commit that last changed the service (when,
who, the subject). It writes nothing.

--wait imported (with --service) polls, fetching the repository each time,
until the service is in the last commit and every member that should
import it holds the ServiceImport (with its ClusterSet IPs, unless it is
headless or the member cannot serve its families); for scripts and CI after
a merge.

Exit codes: 0 shown (or the wait met); 1 the wait timed out (the last view
is printed); 2 invalid config or flags; 3 the repository could not be read.`,
		Example: `  mcs-gitops status --config clusterset.yaml --repo ./platform-mcs
  mcs-gitops status --config clusterset.yaml --service shop/cart -o json
  mcs-gitops status --config clusterset.yaml --service shop/cart --wait imported --timeout 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch output {
			case "text", "json", "yaml":
			default:
				return &exitError{2, fmt.Errorf("-o must be text, json or yaml, got %q", output)}
			}
			if wait != "" && wait != "imported" {
				return &exitError{2, fmt.Errorf("--wait takes imported, got %q", wait)}
			}
			if wait != "" && service == "" {
				return &exitError{2, errors.New("--wait imported needs --service <namespace>/<name>")}
			}
			if service != "" && strings.Count(service, "/") != 1 {
				return &exitError{2, fmt.Errorf("--service must be <namespace>/<name>, got %q", service)}
			}
			ctx := cmd.Context()
			e, err := f.connect(ctx, cmd)
			if err != nil {
				return err
			}
			f.readOnly = true
			repo, err := f.openRepo(ctx, e)
			if err != nil {
				return err
			}
			if err := e.joinCommittedInventory(ctx, repo); err != nil {
				return err
			}
			if member != "" && e.members.Member(member) == nil {
				return &exitError{2, fmt.Errorf("%s is not a member of %s", member, f.config)}
			}
			opts := fleetstatus.Options{Config: e.cfg, Repo: repo, Members: e.members, Member: member, Service: service}
			view, err := fleetstatus.Build(ctx, opts)
			if err != nil {
				return &exitError{3, err}
			}
			var timedOut bool
			if wait != "" {
				view, timedOut, err = waitImported(ctx, opts, view, timeout)
				if err != nil {
					return &exitError{3, err}
				}
			}
			switch output {
			case "json":
				err = view.WriteJSON(cmd.OutOrStdout())
			case "yaml":
				err = view.WriteYAML(cmd.OutOrStdout())
			default:
				err = view.WriteText(cmd.OutOrStdout())
			}
			if err != nil {
				return &exitError{2, err}
			}
			if timedOut {
				return &exitError{1, fmt.Errorf("%s is not imported everywhere after %s", service, timeout)}
			}
			return nil
		},
	}
	f.register(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&member, "member", "", "show only this member and the services it exports or imports")
	fl.StringVar(&service, "service", "", "show only this service, <namespace>/<name>")
	fl.StringVarP(&output, "output", "o", "text", "text, json or yaml")
	fl.StringVar(&wait, "wait", "", "wait for a condition of --service: imported")
	fl.DurationVar(&timeout, "timeout", 5*time.Minute, "how long --wait waits")
	return cmd
}

// waitPoll is how often --wait looks again.
var waitPoll = 2 * time.Second

// waitImported rebuilds the view, fetching the repository first, until the
// service is imported everywhere or timeout passes.
func waitImported(ctx context.Context, o fleetstatus.Options, view *fleetstatus.View, timeout time.Duration) (*fleetstatus.View, bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		if len(view.Services) == 1 && view.Services[0].Imported() {
			return view, false, nil
		}
		if time.Now().After(deadline) {
			return view, true, nil
		}
		select {
		case <-ctx.Done():
			return view, true, nil
		case <-time.After(waitPoll):
		}
		if err := o.Repo.ResetToRemote(ctx); err != nil {
			return nil, false, err
		}
		next, err := fleetstatus.Build(ctx, o)
		if err != nil {
			return nil, false, err
		}
		view = next
	}
}
