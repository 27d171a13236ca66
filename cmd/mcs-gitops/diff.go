// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

func newDiffCommand() *cobra.Command {
	var f loopFlags
	var ci ciFlags
	cmd := &cobra.Command{
		Use:   "diff",
		Short: "Show what the next sync would commit and apply, without writing anything",
		Long: `Diff reads every member like sync and renders on top of the repository's
HEAD, then prints the commit message sync would write and a unified diff of
the files it would change. Nothing is written, committed, pushed or applied.
What the diff changes under clusters/<member>/ is what the next apply sends
to that member.

-o json prints {message, files: {changed, added, removed}, members:
[{member, importsAdded, importsRemoved, importsChanged}], problems, unread}
instead. --summary appends a Markdown summary to a file: per member, the
imports the commit would add, remove and change, and the problems after it.

Exit codes: 0 no change; 1 a change is pending (or a member could not be
read); 2 invalid config or flags; 3 the repository could not be opened or
--summary could not be written.`,
		Example: `  mcs-gitops diff --config clusterset.yaml --repo .

  # in CI: the pending change on the job page, the details as JSON
  mcs-gitops diff --repo . --summary "$GITHUB_STEP_SUMMARY" -o json > pending.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ci.check(); err != nil {
				return err
			}
			f.readOnly = true
			_, loop, err := f.openLoop(cmd, nil)
			if err != nil {
				return err
			}
			d, err := loop.Diff(cmd.Context())
			if err != nil {
				return loopExit(err)
			}
			if err := ci.writeSummary(d.Summary); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case ci.json():
				err := writeJSON(w, diffJSON{Message: d.Message, Files: changedFiles(d.Changes), Members: d.Summary.Members,
					Problems: problemsJSON(d.Summary.Problems), Unread: orEmpty(d.Unread)})
				if err != nil {
					return err
				}
			case d.Empty():
				fmt.Fprintln(w, "no change: the next sync would not commit")
			default:
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
	ci.register(cmd)
	return cmd
}

// diffJSON is diff's -o json; message is empty when nothing would change.
type diffJSON struct {
	Message  string                `json:"message"`
	Files    filesJSON             `json:"files"`
	Members  []layout.MemberChange `json:"members"`
	Problems []problemJSON         `json:"problems"`
	Unread   []string              `json:"unread"`
}
