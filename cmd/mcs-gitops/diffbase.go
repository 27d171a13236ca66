// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rerender"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// side is one commit's world, rendered from its own clusterset.yaml and
// inputs/ on top of its own status/ (the allocations it keeps, the
// imports review mode holds).
type side struct {
	rev    string
	commit plumbing.Hash
	cfg    *v1alpha1.ClusterSet
	out    *render.Output
	// files are the rendered clusters/ and status/.
	files    map[string][]byte
	warnings []render.Problem
	// snaps are the members' snapshots, for -o github's positions.
	snaps []*snapshot.Snapshot
	// health is the commit's status/members.yaml.
	health map[string]snapshot.Health
}

// renderAt renders the world commit rev of repo holds, under sub (the
// sub-path of repo the rendered tree is at). A rev that does not resolve,
// or a world that does not load or render, is bad input (exit 2) naming
// the file as git show takes it, rev:path.
func renderAt(repo *gitsync.Repo, sub, rev string, now time.Time, wi *loadedWhatIf) (*side, error) {
	commit, err := repo.Resolve(rev)
	if err != nil {
		return nil, &exitError{2, err}
	}
	files, err := repo.Files(commit, layout.ConfigFile, layout.InputsDir, layout.StatusDir)
	if err != nil {
		return nil, &exitError{3, fmt.Errorf("%s: %w", rev, err)}
	}
	prefix := rev + ":"
	if sub != "" {
		prefix += sub + "/"
	}
	w, err := rerender.Load(files, func(p string) string { return prefix + p }, now)
	if err != nil {
		return nil, &exitError{2, err}
	}
	if wi != nil && !slices.Contains(w.Config.MemberNames(), wi.member) {
		return nil, &exitError{2, fmt.Errorf("--in %s: no such member in %s's %s (members: %s)", wi.member, rev, layout.ConfigFile, strings.Join(w.Config.MemberNames(), ", "))}
	}
	for _, s := range w.Snapshots {
		wi.apply(s, now)
	}
	if err := w.Render(); err != nil {
		return nil, &exitError{2, fmt.Errorf("%s: %w", rev, err)}
	}
	return &side{rev: rev, commit: commit, cfg: w.Config, out: w.Output, files: w.Files, warnings: snapshotWarnings(w.Snapshots), snaps: w.Snapshots, health: w.Committed.Health}, nil
}

// baseDiff is diff --base: the change from base's world to head's, both
// read from Git.
type baseDiff struct {
	base, head *side
	// whatIf names the manifests merged into the head, if any.
	whatIf  string
	patch   string
	changes *gitsync.Changes
	message string
	summary *layout.ChangeSummary
}

// diffBase renders base and head of the repository that holds the
// directory of config and describes the change between them.
func diffBase(config, base, head string, now time.Time, wi *loadedWhatIf) (*baseDiff, error) {
	root, rel, err := gitsync.LocalRoot(filepath.Dir(config))
	if err != nil {
		return nil, &exitError{2, fmt.Errorf("--base reads the repository that holds %s: %w", config, err)}
	}
	repo, err := gitsync.OpenLocal(root, rel)
	if err != nil {
		return nil, &exitError{3, err}
	}
	b, err := renderAt(repo, rel, base, now, nil)
	if err != nil {
		return nil, err
	}
	h, err := renderAt(repo, rel, head, now, wi)
	if err != nil {
		return nil, err
	}
	d := &baseDiff{base: b, head: h}
	d.patch, d.changes = gitsync.DiffFiles(b.files, h.files)
	c := &layout.Changes{Written: d.changes.Written, Removed: d.changes.Removed}
	members := change.HealthBetween(b.cfg.MemberNames(), b.health, h.cfg.MemberNames(), h.health)
	if !c.Empty() {
		d.message = layout.Message(layout.MessageInput{Prev: &b.out.Report, Next: &h.out.Report, Changes: c, Members: members})
	}
	d.summary = layout.NewChangeSummaryOf(&b.out.Report, &h.out.Report, c, h.cfg.MemberNames(), members)
	return d, nil
}

func (d *baseDiff) empty() bool { return len(d.changes.Written)+len(d.changes.Removed) == 0 }

// writeText prints the change as the live diff does: the message a commit
// of it would have, then the unified diff of the rendered files.
func (d *baseDiff) writeText(w io.Writer, ci *ciFlags) {
	for _, p := range d.head.warnings {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
	span := fmt.Sprintf("%s (%s) -> %s (%s)", d.base.rev, d.base.commit.String()[:12], d.head.rev, d.head.commit.String()[:12])
	if d.whatIf != "" {
		span += " " + d.whatIf
	}
	if d.empty() {
		fmt.Fprintf(w, "no change: %s renders the same\n", span)
		return
	}
	fmt.Fprintf(w, "%s\n\n%s\n\n", span, strings.TrimRight(d.message, "\n"))
	ci.writeDiff(w, d.patch)
}
