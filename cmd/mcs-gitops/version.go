// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
)

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, Git revision, Go version and library versions",
		Long: `Version prints which build this is: the version, the Git revision it was
built from ("(modified)" when the tree had uncommitted changes), its commit
time, the Go version and platform, and the versions of the libraries whose
behaviour shows (the MCS API, Gateway API, client-go, Flux's server-side
apply). Quote it in a bug report. The same is served by run as the metric
mcs_gitops_build_info, and by --version.

A build without a release version says "(devel)"; one without Git
information says "revision: unknown".`,
		Example: `  mcs-gitops version
  mcs-gitops version -o json | jq -r .revision`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			i := buildinfo.Read()
			switch output {
			case "text":
				return i.WriteText(cmd.OutOrStdout())
			case "json":
				b, err := json.MarshalIndent(i, "", "  ")
				if err != nil {
					return fmt.Errorf("version as JSON: %w", err)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
				return err
			}
			return &exitError{2, fmt.Errorf("--output %q: want text or json", output)}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text, or json for scripts")
	return cmd
}

// setVersion makes --version print what the version command prints.
func setVersion(root *cobra.Command) {
	var b bytes.Buffer
	// A bytes.Buffer does not fail.
	_ = buildinfo.Read().WriteText(&b)
	root.Version = b.String()
	root.SetVersionTemplate("{{.Version}}")
}
