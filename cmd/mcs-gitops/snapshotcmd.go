// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"maps"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

func newSnapshotCommand() *cobra.Command {
	var f loopFlags
	var out string
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Read every member and write its snapshot under inputs/<member>/",
		Long: `Snapshot reads what render needs from every live member (ServiceExports, the
Services they export, those Services' EndpointSlices, Namespaces and the
cluster ID ClusterProperty) and writes each member's normalized snapshot
under --out as a commit lays it out: inputs/<member>/cluster.yaml (the
member-wide objects) and inputs/<member>/<namespace>/<service>.yaml (each
service's objects), removing an inputs/<member>.yaml of before the split.
Volatile fields are stripped and objects sorted, so an unchanged cluster
gives identical files. Nothing is committed or applied; render can then run
offline on the result.

A member that cannot be read is reported and its file left as it was.

Exit codes: 0 every member written; 1 some member could not be read;
2 invalid config or flags; 3 --out could not be written (nothing was
changed).`,
		Example: `  mcs-gitops snapshot --config clusterset.yaml --out .
  mcs-gitops render --config clusterset.yaml --inputs inputs/ --out .`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := f.connect(ctx, cmd)
			if err != nil {
				return err
			}
			if err := e.joinInventory(ctx, nil); err != nil {
				return err
			}
			results := e.members.Collect(ctx, e.cfg.Spec.Sync.Timings().MemberTimeout)
			files := map[string][]byte{}
			var roots, failed []string
			for _, r := range results {
				if r.Err != nil {
					failed = append(failed, fmt.Sprintf("%s (%s): %v", r.Member, r.Reason, r.Err))
					continue
				}
				b, err := snapshot.Format(r.Snapshot)
				if err != nil {
					return fmt.Errorf("member %q: %w", r.Member, err)
				}
				parts, err := layout.InputFiles(r.Member, b)
				if err != nil {
					return err
				}
				maps.Copy(files, parts)
				// The one file of before the split goes, as in a commit.
				roots = append(roots, layout.InputFile(r.Member), strings.TrimSuffix(layout.InputDir(r.Member), "/"))
			}
			if e.inventory != nil {
				// render reads the inventory's members from it.
				files[layout.InventoryFile] = e.inventory.file
				roots = append(roots, layout.InventoryFile)
			}
			changes, err := gitsync.WriteTree(out, files, roots)
			if err != nil {
				return treeExit(out, err)
			}
			warnUnsafe(cmd, changes)
			fmt.Fprintf(cmd.OutOrStdout(), "read %d of %d member(s): %d file(s) written\n",
				len(roots)/2, len(results), len(changes.Written))
			if len(failed) > 0 {
				return &exitError{1, fmt.Errorf("could not read %d member(s): %v", len(failed), failed)}
			}
			return nil
		},
	}
	f.register(cmd, false)
	cmd.Flags().StringVar(&out, "out", ".", "directory to write inputs/<member>/ under")
	return cmd
}
