package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/layout"
	"github.com/mcs-gitops/mcs-gitops/nofollow"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

type sourceFlags struct {
	config string
	inputs string
}

func (f *sourceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.config, "config", "clusterset.yaml", "path of the ClusterSet config")
	cmd.Flags().StringVar(&f.inputs, "inputs", "inputs", "directory holding one snapshot per member, <member>.yaml")
}

// load reads and validates the config and every member's snapshot.
func (f *sourceFlags) load() (*v1alpha1.ClusterSet, []*snapshot.Snapshot, error) {
	cfg, err := v1alpha1.LoadFile(f.config)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(cfg.Spec.Members))
	for i, m := range cfg.Spec.Members {
		names[i] = m.Name
	}
	snaps, err := snapshot.LoadDir(f.inputs, names)
	if err != nil {
		return nil, nil, err
	}
	return cfg, snaps, nil
}

// render loads and renders; any failure is bad input, exit code 2. The
// gateway port allocations to keep come from status/gateways.yaml under
// repo, the rendered repository, when it has one.
func (f *sourceFlags) render(repo string) (*v1alpha1.ClusterSet, *render.Output, error) {
	cfg, snaps, err := f.load()
	if err != nil {
		return nil, nil, &exitError{2, err}
	}
	committed, err := readAllocations(repo)
	if err != nil {
		return nil, nil, &exitError{2, err}
	}
	result, err := render.Render(cfg, snaps, committed)
	if err != nil {
		return nil, nil, &exitError{2, err}
	}
	return cfg, result, nil
}

func newRenderCommand() *cobra.Command {
	var src sourceFlags
	var out string
	var check bool
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render every member's manifests from a ClusterSet config and snapshots",
		Long: `Render reads clusterset.yaml and one snapshot per member (inputs/<member>.yaml),
applies the KEP-1645 rules, and writes clusters/<member>/ (a kustomization with
one file per object) and status/ (export conditions, conflicts) under --out.
Files are byte-for-byte deterministic; files no longer rendered are removed.
Nothing outside clusters/ and status/ is touched, and nothing is read or
written through a symbolic link there: a link (or a named pipe, socket or
device) under clusters/ or status/ is deleted and reported on stderr. The
write is all or nothing: every changed file is staged beside its target and
renamed into place only when all are written, so a full disk leaves --out as
it was.

With --check nothing is written: the command exits 1 and prints a unified diff
when the committed output is stale, which is what CI runs on a pull request.

Exit codes: 0 current/written, 1 stale (--check), 2 invalid input, 3 --out
could not be read or written (disk full, permissions; nothing was changed).`,
		Example: `  # render the repository in the current directory
  mcs-gitops render

  # in CI: fail when someone changed inputs/ without re-rendering
  mcs-gitops render --config clusterset.yaml --inputs inputs/ --out . --check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, result, err := src.render(out)
			if err != nil {
				return err
			}
			files, err := layout.Files(result)
			if err != nil {
				return err
			}
			roots := layout.RenderRoots
			if check {
				diff, changes, err := gitsync.DiffTree(out, files, roots)
				if err != nil {
					return treeExit(out, err)
				}
				warnUnsafe(cmd, changes)
				if changes.Empty() {
					fmt.Fprintln(cmd.OutOrStdout(), "rendered output is current")
					return nil
				}
				fmt.Fprint(cmd.OutOrStdout(), diff)
				return &exitError{1, fmt.Errorf("rendered output under %s is stale: %d file(s) differ, %d stale; run mcs-gitops render",
					filepath.Clean(out), len(changes.Written), len(changes.Removed))}
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
	return cmd
}

func newValidateCommand() *cobra.Command {
	var src sourceFlags
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the ClusterSet config and every member's snapshot",
		Long: `Validate loads clusterset.yaml strictly (unknown fields, duplicate members or
cluster IDs, invalid names and pasted credentials are errors, with file, line
and field) and every inputs/<member>.yaml (malformed YAML, duplicate or invalid
objects are errors naming the object), then renders in memory and prints what
is not healthy, the same lines as the Problems of status/SUMMARY.md: invalid
exports (gateway-mode validation included), conflicts, exports not ready,
members without the namespace, traffic policies not applied, and per-service
warnings (e.g. a member that cannot reach another's endpoints). Problems are
not errors: it writes nothing and exits 0.
Gateway port allocations are read from status/gateways.yaml beside --inputs.

Exit codes: 0 valid, 2 invalid.`,
		Example: `  mcs-gitops validate --config clusterset.yaml --inputs inputs/`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, result, err := src.render(filepath.Dir(filepath.Clean(src.inputs)))
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, warn := range result.Report.Warnings {
				fmt.Fprintln(w, "warning:", warn)
			}
			problems := result.Report.Problems()
			for _, p := range problems {
				fmt.Fprintln(w, p)
			}
			fmt.Fprintf(w, "valid: %d member(s), %d exported service(s), %d problem(s)\n",
				len(cfg.Spec.Members), len(result.Report.Services), len(problems))
			return nil
		},
	}
	src.register(cmd)
	return cmd
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

func readAllocations(repo string) (render.Allocations, error) {
	file := filepath.Join(repo, filepath.FromSlash(layout.GatewaysFile))
	data, err := nofollow.ReadUnder(repo, layout.GatewaysFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a, err := layout.ReadAllocations(map[string][]byte{layout.GatewaysFile: data})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return a, nil
}
