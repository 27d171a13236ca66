// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

func newDiffCommand() *cobra.Command {
	var (
		f          loopFlags
		ci         ciFlags
		fail       failOn
		what       whatIf
		base, head string
	)
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

With --base REF it reads no member: it renders the world of commit REF and
the world of --head (default HEAD), each from its own clusterset.yaml and
inputs/ on top of its own status/, read from Git (no checkout needed; the
repository is the one holding --config's directory, the rendered tree at
that directory), and describes the change between them the same way. In a
pull request's checkout, --base origin/main shows what merging it would do,
whether or not its author re-rendered. -o json adds base and head.

--with PATH --in MEMBER is a what-if for an application's pull request: the
Namespaces, Services, ServiceExports and GlobalTrafficPolicies of PATH (a
file, a directory of .yaml/.yml/.json, or - for stdin, e.g. kustomize build
output) are merged into MEMBER's snapshot before the head is rendered, as
applying them would leave it (a Service keeps its assigned cluster IPs, an
existing export its age; a new export is created now); --without PATH takes
what PATH names out. Both repeat; without --base the change is from --head
(default HEAD) to --head plus the manifests, so an app repository's CI can
run, on a checkout of the ClusterSet's repository:
  mcs-gitops diff --config clusterset.yaml --with ../app/deploy --in cluster-2

--fail-on decides the exit code instead, for a CI job that should pass
unless the change does something of a kind it names: problems of the world
after it (invalid, conflict, notready, missingnamespace, warning, policy)
and kinds of change (withdrawal: a member stops importing a service;
new-reachability; new-conflict; policy: a traffic policy changes where
traffic goes; member: a member joins or leaves, with --base). Each finding is
listed on stderr.

Exit codes: 0 no change (with --fail-on: nothing of its kinds); 1 a change
is pending (with --fail-on: something of its kinds), or a member could not
be read; 2 invalid config, flags or input (with --base: a ref that does not
resolve, a world that does not load, each error naming ref and file); 3 the
repository could not be opened or --summary could not be written.`,
		Example: `  mcs-gitops diff --config clusterset.yaml --repo .

  # in CI: the pending change on the job page, the details as JSON
  mcs-gitops diff --repo . --summary "$GITHUB_STEP_SUMMARY" -o json > pending.json

  # in a pull request's checkout: what merging it would change, offline
  mcs-gitops diff --config clusterset.yaml --base origin/main --summary "$GITHUB_STEP_SUMMARY"

  # in an app's pull request: what its ServiceExport would do in cluster-2
  kustomize build deploy/ | mcs-gitops diff --config ../platform/clusterset.yaml --with - --in cluster-2 --fail-on=new-conflict,withdrawal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ci.check(); err != nil {
				return err
			}
			if err := fail.parse(); err != nil {
				return err
			}
			if what.set() && base == "" {
				base = head // a what-if compares the head with itself plus the manifests
			}
			if base != "" {
				wi, err := what.load(cmd.InOrStdin(), time.Now())
				if err != nil {
					return err
				}
				return runDiffBase(cmd.OutOrStdout(), f.config, base, head, &ci, &fail, wi, &what)
			}
			if what.in != "" {
				return &exitError{2, fmt.Errorf("--in goes with --with or --without")}
			}
			if cmd.Flags().Changed("head") {
				return &exitError{2, fmt.Errorf("--head needs --base")}
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
			case ci.junit():
				if err := writeJUnit(w, nil, d.Summary.Problems, d.Summary.Change, &fail); err != nil {
					return err
				}
			case ci.json():
				err := writeJSON(w, diffJSON{Message: d.Message, Files: changedFiles(d.Changes), Members: d.Summary.Members,
					Problems: problemsJSON(d.Summary.Problems), Unread: orEmpty(d.Unread),
					Change: d.Summary.Change, Findings: findings(d.Summary.Change)})
				if err != nil {
					return err
				}
			case d.Empty():
				fmt.Fprintln(w, "no change: the next sync would not commit")
			default:
				fmt.Fprintf(w, "%s\n\n", d.Message)
				ci.writeDiff(w, d.Patch)
			}
			if ci.github() {
				writeAnnotations(w, annotations(d.Summary.Problems, d.Summary.Change, &fail, nil))
			}
			if len(d.Unread) > 0 {
				return &exitError{1, fmt.Errorf("could not read: %v", d.Unread)}
			}
			if fail.set() {
				return fail.check(d.Summary.Problems, d.Summary.Change)
			}
			if !d.Empty() {
				return &exitError{1, fmt.Errorf("%d file(s) would change", d.Files)}
			}
			return nil
		},
	}
	f.register(cmd, true)
	ci.register(cmd)
	ci.registerStat(cmd)
	ci.registerComment(cmd)
	fail.register(cmd)
	what.register(cmd)
	cmd.Flags().StringVar(&base, "base", "", "render the world of this commit (a branch, tag, origin/main, a hash) and of --head from Git, and describe the change between them; no member is read")
	cmd.Flags().StringVar(&head, "head", "HEAD", "with --base: the commit whose world the change leads to")
	return cmd
}

// runDiffBase is diff --base.
func runDiffBase(w io.Writer, config, base, head string, ci *ciFlags, fail *failOn, wi *loadedWhatIf, what *whatIf) error {
	d, err := diffBase(config, base, head, time.Now(), wi)
	if err != nil {
		return err
	}
	if wi != nil {
		d.whatIf = what.describe()
	}
	if err := ci.writeSummary(d.summary); err != nil {
		return err
	}
	if ci.junit() {
		problems := append(append([]render.Problem{}, d.head.warnings...), d.summary.Problems...)
		if err := writeJUnit(w, &d.head.out.Report, problems, d.summary.Change, fail); err != nil {
			return err
		}
	} else if ci.json() {
		problems := append(append([]render.Problem{}, d.head.warnings...), d.summary.Problems...)
		err := writeJSON(w, diffJSON{Message: d.message, Files: changedFiles(d.changes), Members: d.summary.Members,
			Problems: problemsJSON(problems), Unread: []string{}, Base: d.base.commit.String(), Head: d.head.commit.String(),
			Change: d.summary.Change, Findings: findings(d.summary.Change)})
		if err != nil {
			return err
		}
	} else {
		d.writeText(w, ci)
	}
	if ci.github() {
		problems := append(append([]render.Problem{}, d.head.warnings...), d.summary.Problems...)
		writeAnnotations(w, annotations(problems, d.summary.Change, fail, locate(d.head.snaps)))
	}
	if fail.set() {
		return fail.check(append(append([]render.Problem{}, d.head.warnings...), d.summary.Problems...), d.summary.Change)
	}
	if !d.empty() {
		return &exitError{1, fmt.Errorf("%d file(s) change from %s to %s", len(d.changes.Written)+len(d.changes.Removed), base, head)}
	}
	return nil
}

// diffJSON is diff's -o json; message is empty when nothing would change.
type diffJSON struct {
	Message  string                `json:"message"`
	Files    filesJSON             `json:"files"`
	Members  []layout.MemberChange `json:"members"`
	Problems []problemJSON         `json:"problems"`
	Unread   []string              `json:"unread"`
	// Change is the typed model every view words (internal/change): per
	// service the reach gained and lost, exports, fields, conflicts,
	// policies and endpoint counts, each old and new; Findings are its
	// changes by --fail-on kind.
	Change   change.Set       `json:"change"`
	Findings []change.Finding `json:"findings"`
	// Base and Head are the commits of diff --base; absent otherwise.
	Base string `json:"base,omitempty"`
	Head string `json:"head,omitempty"`
}

// findings is never nil, so JSON shows [] for none.
func findings(s change.Set) []change.Finding {
	if f := s.Findings(); f != nil {
		return f
	}
	return []change.Finding{}
}
