// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// ciFlags are what the commands CI runs (validate, render --check, diff)
// share: a machine-readable output and a Markdown summary for a person.
type ciFlags struct {
	output  string
	summary string
	// stat prints a diffstat in place of the unified diff (diff, render
	// --check).
	stat bool
	// comment is diff's --comment: the summary sized for a pull request
	// comment, written whole (mcs-gitops comment posts it).
	comment string
}

// registerComment adds --comment, for diff.
func (f *ciFlags) registerComment(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.comment, "comment", "", "write the summary sized for a pull request comment (under 65,536 characters) to this file, replacing it; mcs-gitops comment posts it")
}

// registerStat adds --stat, for the commands that print a diff.
func (f *ciFlags) registerStat(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.stat, "stat", false, "print a diffstat (lines added and removed per file) instead of the unified diff")
}

// writeDiff prints the patch, or its stat with --stat.
func (f *ciFlags) writeDiff(w io.Writer, patch string) {
	if f.stat {
		writeStat(w, diffStat(patch))
		return
	}
	writePatch(w, patch)
}

func (f *ciFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text; json (documented in docs/running.md, \"In CI\"); github, the text followed by GitHub Actions annotations on the snapshot file and line of each problem and change; or junit, a JUnit XML report with a test case per service, failed by --fail-on's kinds (docs/ci.md)")
	cmd.Flags().StringVar(&f.summary, "summary", "", "append a Markdown summary of what the change does per member, and the problems, to this file (e.g. $GITHUB_STEP_SUMMARY)")
}

// check rejects an output format that is not known before any work.
func (f *ciFlags) check() error {
	if !slices.Contains([]string{"text", "json", "github", "junit"}, f.output) {
		return &exitError{2, fmt.Errorf("--output must be text, json, github or junit, got %q", f.output)}
	}
	return nil
}

func (f *ciFlags) json() bool   { return f.output == "json" }
func (f *ciFlags) github() bool { return f.output == "github" }
func (f *ciFlags) junit() bool  { return f.output == "junit" }

// writeSummary appends the review to --summary, if given: appending lets
// several commands of one CI step share $GITHUB_STEP_SUMMARY.
func (f *ciFlags) writeSummary(r *layout.ChangeSummary) error {
	if f.comment != "" {
		if err := os.WriteFile(f.comment, []byte(r.MarkdownWithin(layout.CommentLimit)), 0o644); err != nil {
			return &exitError{3, fmt.Errorf("--comment: %w", err)}
		}
	}
	if f.summary == "" {
		return nil
	}
	file, err := os.OpenFile(f.summary, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return &exitError{3, fmt.Errorf("--summary: %w", err)}
	}
	_, err = io.WriteString(file, r.Markdown())
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &exitError{3, fmt.Errorf("--summary %s: %w", f.summary, err)}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// problemJSON is one problem in -o json.
type problemJSON struct {
	Kind    render.ProblemKind `json:"kind"`
	Service string             `json:"service"`
	Member  string             `json:"member"`
	Reason  string             `json:"reason"`
	Message string             `json:"message"`
}

func problemsJSON(ps []render.Problem) []problemJSON {
	out := make([]problemJSON, len(ps))
	for i, p := range ps {
		out[i] = problemJSON{Kind: p.Kind, Member: p.Member, Reason: p.Reason, Message: p.Message}
		if p.Name != "" { // a snapshot file's warning is about no service
			out[i].Service = p.Namespace + "/" + p.Name
		}
	}
	return out
}

// filesJSON are the files a change touches, paths relative to the
// rendered repository.
type filesJSON struct {
	Changed []string `json:"changed"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

func changedFiles(c *gitsync.Changes) filesJSON {
	f := filesJSON{Changed: []string{}, Added: orEmpty(c.Added), Removed: orEmpty(c.Removed)}
	for _, p := range c.Written {
		if !slices.Contains(c.Added, p) {
			f.Changed = append(f.Changed, p)
		}
	}
	return f
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// summarize writes --summary for a render against a rendered tree whose
// report is prev: what it changes there per member, and the problems.
func (f *ciFlags) summarize(prev *render.Report, cfg *v1alpha1.ClusterSet, result *render.Output, changes *gitsync.Changes) error {
	if f.summary == "" {
		return nil
	}
	c := &layout.Changes{Written: changes.Written, Removed: changes.Removed}
	return f.writeSummary(layout.NewChangeSummary(prev, &result.Report, c, cfg.MemberNames()))
}
