// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

type sourceFlags struct {
	config string
	inputs string
	// loaded are the snapshots render read, for -o github's positions.
	loaded []*snapshot.Snapshot
}

func (f *sourceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.config, "config", "clusterset.yaml", "path of the ClusterSet config")
	cmd.Flags().StringVar(&f.inputs, "inputs", "inputs", "directory holding one snapshot per member, <member>.yaml")
}

// load reads and validates the config and every member's snapshot, the
// members the committed status/inventory.yaml records among them. A
// snapshot's creationTimestamps are judged against this machine's clock,
// read here: parsing and rendering read none.
func (f *sourceFlags) load(committed *layout.Committed) (*v1alpha1.ClusterSet, []*snapshot.Snapshot, error) {
	cfg, err := v1alpha1.LoadFile(f.config)
	if err != nil {
		return nil, nil, err
	}
	if cfg, err = layout.WithInventory(cfg, committed.Inventory, layout.InventoryFile); err != nil {
		return nil, nil, err
	}
	snaps, err := snapshot.LoadDir(f.inputs, cfg.MemberNames(), time.Now())
	if err != nil {
		return nil, nil, err
	}
	return cfg, snaps, nil
}

// render loads and renders on top of what the rendered repository under
// repo holds (readCommitted: the gateway port allocations to keep, the
// imports review mode holds back, the inventory's members), which it
// returns too, with the snapshot files' warnings (snapshotWarnings). Bad
// input is exit code 2.
func (f *sourceFlags) render(repo string) (*v1alpha1.ClusterSet, *render.Output, *layout.Committed, []render.Problem, error) {
	committed, err := readCommitted(repo)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cfg, snaps, err := f.load(committed)
	if err != nil {
		return nil, nil, nil, nil, &exitError{2, err}
	}
	snapshot.DropStale(snaps, committed.Health)
	result, err := render.RenderWith(cfg, snaps, render.Options{Committed: committed.Report.Allocations(), Held: committed.Review.Held(),
		Staged: rollout.Staging(committed.Rollouts, snaps)})
	if err != nil {
		return nil, nil, nil, nil, &exitError{2, err}
	}
	f.loaded = snaps
	return cfg, result, committed, snapshotWarnings(snaps), nil
}

// snapshotWarnings are the snapshot files' warnings as problems of kind
// Warning, so that --fail-on=warning fails on them as on a service's.
// They stay out of the report: they depend on the clock, and status/ must
// not.
func snapshotWarnings(snaps []*snapshot.Snapshot) []render.Problem {
	var out []render.Problem
	for _, s := range snaps {
		for _, w := range s.Warnings {
			out = append(out, render.Problem{Kind: render.ProblemWarning, Member: s.Member, Message: w})
		}
	}
	return out
}

// warnSnapshots says the snapshot files' warnings on stderr, for render,
// which has no --fail-on.
func warnSnapshots(cmd *cobra.Command, warnings []render.Problem) {
	for _, w := range warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
}

func newRenderCommand() *cobra.Command {
	var src sourceFlags
	var ci ciFlags
	var out string
	var check bool
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render every member's manifests from a ClusterSet config and snapshots",
		Long: `Render reads clusterset.yaml and one snapshot per member (inputs/<member>.yaml,
or the directory inputs/<member>/ a commit splits it into),
applies the KEP-1645 rules, and writes clusters/<member>/ (a kustomization with
one file per object) and status/ (export conditions, conflicts) under --out.
Files are byte-for-byte deterministic; files no longer rendered are removed.
What validate warns about in the snapshot files is printed on stderr (see
mcs-gitops validate --help); it does not change the exit code.
Nothing outside clusters/ and status/ is touched, and nothing is read or
written through a symbolic link there: a link (or a named pipe, socket or
device) under clusters/ or status/ is deleted and reported on stderr. The
write is all or nothing: every changed file is staged beside its target and
renamed into place only when all are written, so a full disk leaves --out as
it was.

With --check nothing is written: the command exits 1 and prints a unified diff
when the committed output is stale, which is what CI runs on a pull request;
the error counts the files that differ, the rendered files missing and the
files no longer rendered. When the difference is mcs-gitops's alone (the
checkout holds exactly the config, inputs and rendered files of the loop's
last commit, and that commit's Rendered-By trailer names another version or
layout) the error says so and names both versions: re-render with this
version and commit that alone, or run the loop's version in CI. Telling
needs the history back to that commit (a shallow clone may not have it).
-o json prints {stale, files: {changed, added, removed}, onlyRenderer} instead of the diff. --summary appends a Markdown summary to a
file: per member, the imports re-rendering adds, removes and changes, and
the problems.

Exit codes: 0 current/written, 1 stale (--check), 2 invalid input, 3 --out
could not be read or written (disk full, permissions; nothing was changed)
or --summary could not be written.`,
		Example: `  # render the repository in the current directory
  mcs-gitops render

  # in CI: fail when someone changed inputs/ without re-rendering
  mcs-gitops render --config clusterset.yaml --inputs inputs/ --out . --check

  # on GitHub: what the pull request does per member, on the job page
  mcs-gitops render --check --summary "$GITHUB_STEP_SUMMARY"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ci.check(); err != nil {
				return err
			}
			if ci.github() || ci.junit() {
				return &exitError{2, errors.New("-o github and -o junit go with validate and diff")}
			}
			if !check && (ci.json() || ci.summary != "" || ci.stat) {
				return &exitError{2, errors.New("-o json, --summary and --stat go with --check; render itself prints one line")}
			}
			cfg, result, committed, warnings, err := src.render(out)
			if err != nil {
				return err
			}
			warnSnapshots(cmd, warnings)
			files, err := layout.Files(result)
			if err != nil {
				return err
			}
			maps.Copy(files, committed.Records)
			roots := layout.RenderRoots
			if check {
				diff, changes, err := gitsync.DiffTree(out, files, roots)
				if err != nil {
					return treeExit(out, err)
				}
				warnUnsafe(cmd, changes)
				if err := ci.summarize(committed.Report, cfg, result, changes); err != nil {
					return err
				}
				var renderer *rendererChange
				if !changes.Empty() {
					renderer = onlyRenderer(out, &src)
				}
				w := cmd.OutOrStdout()
				switch {
				case ci.json():
					if err := writeJSON(w, renderCheckJSON{Stale: !changes.Empty(), Files: changedFiles(changes), OnlyRenderer: renderer}); err != nil {
						return err
					}
				case changes.Empty():
					fmt.Fprintln(w, "rendered output is current")
				default:
					ci.writeDiff(w, diff)
				}
				if changes.Empty() {
					return nil
				}
				if renderer != nil {
					return &exitError{1, fmt.Errorf("rendered output under %s is stale: %s; %w",
						filepath.Clean(out), staleCounts(changes), renderer)}
				}
				return &exitError{1, fmt.Errorf("rendered output under %s is stale: %s; run mcs-gitops render",
					filepath.Clean(out), staleCounts(changes))}
			}
			changes, err := gitsync.WriteTree(out, files, roots)
			if err != nil {
				return treeExit(out, err)
			}
			warnUnsafe(cmd, changes)
			fmt.Fprintf(cmd.OutOrStdout(), "rendered %d member(s), %d service(s): %d file(s) written, %d removed\n",
				len(result.Members), len(result.Report.Services), len(changes.Written), len(changes.Removed))
			return nil
		},
	}
	src.register(cmd)
	cmd.Flags().StringVar(&out, "out", ".", "directory of the rendered repository (clusters/ and status/ are written under it)")
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; exit 1 with a unified diff if the output under --out is stale")
	ci.register(cmd)
	ci.registerStat(cmd)
	return cmd
}

func newValidateCommand() *cobra.Command {
	var src sourceFlags
	var ci ciFlags
	var fail failOn
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the ClusterSet config and every member's snapshot",
		Long: `Validate loads clusterset.yaml strictly (unknown fields, duplicate members or
cluster IDs, invalid names and pasted credentials are errors, with file, line
and field) and every member's snapshot (malformed YAML, duplicate or invalid
objects are errors naming the object), then renders in memory and prints what
is not healthy, the same lines as the Problems of status/SUMMARY.md: invalid
exports (gateway-mode validation included), conflicts, exports not ready,
members without the namespace, traffic policies not applied, and per-service
warnings (e.g. a member that cannot reach another's endpoints). Before those
come the warnings about the snapshot files, each naming file:line, member and
object: a metadata.creationTimestamp in the future (more than 5 minutes past
this machine's clock; the oldest export wins a conflict), and an EndpointSlice
whose kubernetes.io/service-name label is missing or names no Service of that
snapshot (no export uses its endpoints). It writes nothing but the --summary
file. Problems are not errors unless --fail-on names their kind
(comma-separated, in any case): Invalid, Conflict, NotReady,
MissingNamespace, Warning (both kinds of warning) or Policy. --fail-on also
takes kinds of change, against the rendered tree beside --inputs (what
re-rendering would commit): withdrawal (a member stops importing a
service), new-reachability (a member starts importing one), new-conflict,
policy (a traffic policy changes where traffic goes; "policy" also names
the problem of a policy not applied) and member (a member joins or leaves,
against status/members.yaml).
Gateway port allocations are read from status/gateways.yaml beside --inputs.

-o json prints {members, services, warnings, problems: [{kind, service,
member, reason, message}]}; a snapshot file's warning has no service.
--summary appends a Markdown summary to a file: per member, the imports
added, removed and changed relative to the rendered tree beside --inputs
(status/ and clusters/), and the problems.

Exit codes: 0 valid; 1 a problem or change of a kind in --fail-on (each
listed on stderr); 2 invalid; 3 --summary could not be written, or the rendered tree
it compares with could not be read.`,
		Example: `  mcs-gitops validate --config clusterset.yaml --inputs inputs/

  # in CI: fail on conflicts and invalid exports, summarize for the job page
  mcs-gitops validate --fail-on=conflict,invalid --summary "$GITHUB_STEP_SUMMARY"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ci.check(); err != nil {
				return err
			}
			if err := fail.parse(); err != nil {
				return err
			}
			repo := filepath.Dir(filepath.Clean(src.inputs))
			cfg, result, committed, warnings, err := src.render(repo)
			if err != nil {
				return err
			}
			if ci.summary != "" {
				files, err := layout.Files(result)
				if err != nil {
					return err
				}
				_, changes, err := gitsync.DiffTree(repo, files, layout.RenderRoots)
				if err != nil {
					return treeExit(repo, err)
				}
				if err := ci.summarize(committed.Report, cfg, result, changes); err != nil {
					return err
				}
			}
			problems := append(warnings, result.Report.Problems()...)
			w := cmd.OutOrStdout()
			// A change is against the rendered tree beside --inputs, as
			// --summary's: what re-rendering would commit.
			var set change.Set
			if fail.wantsChanges() || ci.github() || ci.junit() {
				set = change.Between(committed.Report, &result.Report)
				if len(committed.Health) > 0 {
					set.Members = change.HealthBetween(slices.Collect(maps.Keys(committed.Health)), committed.Health, cfg.MemberNames(), committed.Health)
				}
			}
			if ci.junit() {
				if err := writeJUnit(w, &result.Report, problems, set, &fail); err != nil {
					return err
				}
				return fail.check(problems, set)
			}
			if ci.json() {
				services := make([]string, len(result.Report.Services))
				for i, s := range result.Report.Services {
					services[i] = s.Namespace + "/" + s.Name
				}
				err := writeJSON(w, validateJSON{Members: cfg.MemberNames(), Services: services,
					Warnings: orEmpty(result.Report.Warnings), Problems: problemsJSON(problems)})
				if err != nil {
					return err
				}
			} else {
				for _, warn := range result.Report.Warnings {
					fmt.Fprintln(w, "warning:", warn)
				}
				for _, p := range problems {
					fmt.Fprintln(w, p)
				}
				fmt.Fprintf(w, "valid: %d member(s), %d exported service(s), %d problem(s)\n",
					len(cfg.Spec.Members), len(result.Report.Services), len(problems))
			}
			if ci.github() {
				writeAnnotations(w, annotations(problems, set, &fail, locate(src.loaded)))
			}
			return fail.check(problems, set)
		},
	}
	src.register(cmd)
	ci.register(cmd)
	fail.register(cmd)
	return cmd
}

// validateJSON is validate's -o json.
type validateJSON struct {
	Members  []string      `json:"members"`
	Services []string      `json:"services"`
	Warnings []string      `json:"warnings"`
	Problems []problemJSON `json:"problems"`
}

// renderCheckJSON is render --check's -o json.
type renderCheckJSON struct {
	Stale bool      `json:"stale"`
	Files filesJSON `json:"files"`
	// OnlyRenderer is set when the difference is the renderer's alone.
	OnlyRenderer *rendererChange `json:"onlyRenderer,omitempty"`
}

// staleCounts says how the tree on disk differs from a fresh render, each
// count only when it is not zero.
func staleCounts(c *gitsync.Changes) string {
	var parts []string
	if n := len(c.Written) - len(c.Added); n > 0 {
		parts = append(parts, fmt.Sprintf("%d file(s) differ", n))
	}
	if n := len(c.Added); n > 0 {
		parts = append(parts, fmt.Sprintf("%d rendered file(s) missing", n))
	}
	if n := len(c.Removed); n > 0 {
		parts = append(parts, fmt.Sprintf("%d file(s) no longer rendered", n))
	}
	return strings.Join(parts, ", ")
}

// treeExit gives a failure to read or write --out its own exit code, 3, so
// a full disk is not mistaken for bad input.
func treeExit(out string, err error) error {
	var ioErr *gitsync.IOError
	if errors.As(err, &ioErr) {
		return &exitError{3, fmt.Errorf("%s: %w", filepath.Clean(out), err)}
	}
	return err
}

// warnUnsafe names, on stderr, every link or special file found under the
// managed directories: someone put it there, and it is being deleted.
func warnUnsafe(cmd *cobra.Command, c *gitsync.Changes) {
	for _, p := range c.Unsafe {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s is not a regular file (a symbolic link?); it was not followed and is replaced or deleted\n", p)
	}
}
