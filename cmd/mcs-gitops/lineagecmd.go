// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/lineage"
)

func newLineageCommand() *cobra.Command {
	var f lineageFlags
	cmd := &cobra.Command{
		Use:   "lineage",
		Short: "Show or accept the record of the last commit pushed, which the loop holds its branch to",
		Long: `The loop records, in a ConfigMap of the management cluster (--lineage-record),
the last commit it pushed and the members whose snapshots that commit holds.
Every cycle, and every restart or fresh clone (the CronJob's pod), refuses a
branch that does not descend from that commit (a force-push, a remote
recreated empty) and a branch that lacks the snapshot of a member that cannot
be read: Git stands in for members that cannot be read, and a rewritten
branch would bring back or drop exports nobody changed. A refused branch
fails the cycle (exit 3), sets mcs_gitops_branch_refused and writes a Warning
Event on the ConfigMap; nothing is rendered, committed or applied.

Mend the branch (push the recorded commit back), or accept it as it is with
"lineage accept": the acceptance (who, as the management cluster
authenticates you; why; when; the commit it replaced) is recorded on the
ConfigMap and in the loop's log, and the running loop takes it at its next
cycle.`,
		Example: `  # what the loop holds the branch to
  mcs-gitops lineage show --management-kubeconfig mgmt.kubeconfig

  # a person takes the branch as it is now
  mcs-gitops lineage accept --management-kubeconfig mgmt.kubeconfig --reason "restored from backup"`,
		Args: cobra.NoArgs,
	}
	f.register(cmd)
	cmd.AddCommand(newLineageShowCommand(&f), newLineageAcceptCommand(&f))
	return cmd
}

type lineageFlags struct {
	management, record string
}

func (f *lineageFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.management, "management-kubeconfig", "", "kubeconfig of the management cluster (default: in-cluster config when running in a Pod)")
	fl.StringVar(&f.record, "lineage-record", defaultLineage, "NAMESPACE/NAME of the ConfigMap the loop records its lineage in")
}

// store is the record's ConfigMap, and the management cluster's config.
func (f *lineageFlags) store() (*lineage.ConfigMap, *rest.Config, error) {
	cfg, err := (&loopFlags{management: f.management}).managementConfig()
	if err != nil {
		return nil, nil, &exitError{2, err}
	}
	if cfg == nil {
		return nil, nil, &exitError{2, fmt.Errorf("the lineage record is in the management cluster: pass --management-kubeconfig or run in-cluster")}
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, nil, &exitError{2, fmt.Errorf("management cluster: %w", err)}
	}
	if f.record == "" {
		return nil, nil, &exitError{2, fmt.Errorf("--lineage-record is empty")}
	}
	store, err := lineageStore(f.record, c)
	return store, cfg, err
}

func newLineageShowCommand(f *lineageFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "show",
		Short:   "Print the lineage record",
		Example: `  mcs-gitops lineage show --management-kubeconfig mgmt.kubeconfig`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, _, err := f.store()
			if err != nil {
				return err
			}
			rec, err := store.Load(cmd.Context())
			if err != nil {
				return &exitError{3, err}
			}
			printRecord(cmd.OutOrStdout(), store.Where(), rec)
			return nil
		},
	}
}

func printRecord(w io.Writer, where string, rec *lineage.Record) {
	fmt.Fprintf(w, "record:     %s\n", where)
	if rec == nil {
		fmt.Fprintln(w, "no record yet: the loop writes one when it first pushes")
		return
	}
	commit := rec.Commit
	if commit == "" {
		commit = "(none: the branch is taken as it is at the next cycle)"
	}
	fmt.Fprintf(w, "repository: %s\nbranch:     %s\npath:       %s\ncommit:     %s\nmembers:    %s\n",
		rec.Repository, rec.Branch, orDash(rec.Path), commit, orDash(strings.Join(rec.Members, ", ")))
	if a := rec.Accepted; a != nil {
		fmt.Fprintf(w, "accepted:   by %s at %s, replacing %s: %s\n", a.By, a.At.Format(time.RFC3339), orDash(a.Previous), a.Reason)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newLineageAcceptCommand(f *lineageFlags) *cobra.Command {
	var reason, commit, by string
	cmd := &cobra.Command{
		Use:   "accept",
		Short: "Accept the branch as it is now (or from --commit on): the loop stops refusing it",
		Long: `Accept records that a person takes the branch as it is: the loop's next
cycle follows it without checking it against the last commit pushed, renders
on it and starts the record again from there. With --commit the branch must
descend from that commit instead (say, the commit you restored from a
backup).

What accepting means: for each member that cannot be read, the branch's
inputs/<member>/ stands in for it, whatever the branch now holds, and
the ClusterSet IPs allocated there are kept. Read "git log" of the branch
first.

Who accepted (the user name the management cluster authenticates, from a
SelfSubjectReview, or --by when that is not allowed), why (--reason), when
and the commit it replaced are kept on the ConfigMap's annotations until the
next acceptance, and the loop logs them; the apiserver's audit log has the
write.`,
		Example: `  mcs-gitops lineage accept --reason "restored main from the 2026-11-25 backup"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(reason) == "" {
				return &exitError{2, fmt.Errorf("--reason is required: say why the branch is to be taken as it is")}
			}
			store, cfg, err := f.store()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			rec, err := store.Load(ctx)
			if err != nil {
				return &exitError{3, err}
			}
			if rec == nil {
				return &exitError{1, fmt.Errorf("%s does not exist: the loop has recorded nothing, so it refuses no branch on its lineage", store.Where())}
			}
			if by == "" {
				if by, err = whoAmI(ctx, cfg); err != nil {
					return &exitError{3, fmt.Errorf("%w; pass --by to name yourself", err)}
				}
			}
			accepted, err := store.Accept(ctx, rec.Repository, rec.Branch, rec.Path, commit, by, reason, time.Now())
			if err != nil {
				return &exitError{3, err}
			}
			printRecord(cmd.OutOrStdout(), store.Where(), accepted)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&reason, "reason", "", "why the branch is to be taken as it is (required; recorded)")
	fl.StringVar(&commit, "commit", "", "full hash of the commit the branch must descend from from now on (default: none, the branch as it is)")
	fl.StringVar(&by, "by", "", "who accepts, when the management cluster does not allow a SelfSubjectReview (default: the authenticated user)")
	return cmd
}

// whoAmI is the user name the management cluster authenticates.
func whoAmI(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("cannot tell who you are (SelfSubjectReview: %w)", err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("cannot tell who you are: the SelfSubjectReview names no user")
	}
	return r.Status.UserInfo.Username, nil
}
