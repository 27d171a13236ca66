package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newDiffCommand() *cobra.Command {
	var f loopFlags
	cmd := &cobra.Command{
		Use:   "diff",
		Short: "Show what the next sync would commit and apply, without writing anything",
		Long: `Diff reads every member like sync and renders on top of the repository's
HEAD, then prints the commit message sync would write and a unified diff of
the files it would change. Nothing is written, committed, pushed or applied.
What the diff changes under clusters/<member>/ is what the next apply sends
to that member.

Exit codes: 0 no change; 1 a change is pending (or a member could not be
read); 2 invalid config or flags; 3 the repository could not be opened.`,
		Example: `  mcs-gitops diff --config clusterset.yaml --repo .`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, loop, err := f.openLoop(cmd, nil)
			if err != nil {
				return err
			}
			d, err := loop.Diff(cmd.Context())
			if err != nil {
				return loopExit(err)
			}
			w := cmd.OutOrStdout()
			if d.Empty() {
				fmt.Fprintln(w, "no change: the next sync would not commit")
			} else {
				fmt.Fprintf(w, "%s\n\n%s", d.Message, d.Patch)
			}
			if len(d.Unread) > 0 {
				return &exitError{1, fmt.Errorf("could not read: %v", d.Unread)}
			}
			if !d.Empty() {
				return &exitError{1, fmt.Errorf("%d file(s) would change", d.Files)}
			}
			return nil
		},
	}
	f.register(cmd, true)
	return cmd
}
