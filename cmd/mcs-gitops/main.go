// SPDX-License-Identifier: Apache-2.0

// Command mcs-gitops renders Kubernetes Multi-Cluster Services (KEP-1645)
// into a Git repository. This package only parses flags and wires the
// packages together; behaviour lives in the packages.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries a specific exit code, e.g. 1 for "render --check found
// stale output" as opposed to 2 for a usage or input error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func main() {
	root := newRootCommand()
	if err := root.Execute(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil && ee.err.Error() != "" {
				fmt.Fprintln(os.Stderr, "Error:", ee.err)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(2)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcs-gitops",
		Short: "Multi-Cluster Services (KEP-1645) as GitOps",
		Long: `mcs-gitops renders the ServiceImports, derived Services and EndpointSlices
that make services exported in one cluster of a ClusterSet reachable from every
other, as plain Kubernetes manifests in a Git repository: every cross-cluster
change is a commit a person can review, revert and audit.

The repository it renders:

  clusterset.yaml                  the ClusterSet config (never any credential)
  inputs/<member>/                 one snapshot per member (what is exported),
                                   a file per service
  clusters/<member>/               a kustomization per member: what it should hold
  status/                          export conditions and conflicts, per service`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRenderCommand(), newValidateCommand(), newSnapshotCommand(), newSyncCommand(),
		newDiffCommand(), newApplyCommand(), newRunCommand(), newMemberCommand(), newDoctorCommand(), newVersionCommand(), newStatusCommand(), newLineageCommand(), newCommentCommand(),
		newRolloutCommand(), newCredentialCommand())
	setVersion(root)
	return root
}
