// SPDX-License-Identifier: Apache-2.0

// Package rerender renders a commit's own world again: its clusterset.yaml
// and inputs/ on top of its status/ (the gateway port allocations it keeps,
// the imports review mode holds back, the members it left stale), as the
// loop rendered them. diff --base renders both sides of a pull request
// with it, and sync re-renders the branch's last commit with it when
// another version of mcs-gitops rendered that commit (a migration).
//
// It reads no cluster, no Git and no clock: a commit's files come in as
// gitsync.Repo.Files returns them, and the time snapshot warnings are
// judged against comes in with them. Every error it returns is the
// commit's content's fault, named as the caller names its files.
package rerender

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// World is one commit's world, loaded (Load) and then rendered (Render).
type World struct {
	// Name names a file of the commit in errors and warnings, as git
	// show takes it (rev:path).
	Name      func(path string) string
	Config    *v1alpha1.ClusterSet
	Snapshots []*snapshot.Snapshot
	Committed *layout.Committed
	// Output and Files (the rendered clusters/ and status/) are set by
	// Render.
	Output *render.Output
	Files  map[string][]byte
}

// Load parses a commit's files (keys relative to the rendered tree, under
// layout.ConfigFile, InputsDir and StatusDir): the config, a snapshot of
// every member and nothing else under inputs/, and what status/ records.
// Every problem found is reported at once.
func Load(files map[string][]byte, name func(path string) string, now time.Time) (*World, error) {
	data, ok := files[layout.ConfigFile]
	if !ok {
		return nil, fmt.Errorf("%s: not found", name(layout.ConfigFile))
	}
	cfg, err := v1alpha1.Parse(name(layout.ConfigFile), data)
	if err != nil {
		return nil, err
	}
	committed, err := layout.ReadCommitted(files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name(layout.StatusDir), err)
	}
	if cfg, err = layout.WithInventory(cfg, committed.Inventory, name(layout.InventoryFile)); err != nil {
		return nil, err
	}
	w := &World{Name: name, Config: cfg, Committed: committed}
	sources := layout.InputSources(files, name(""))
	var errs []error
	members := map[string]bool{}
	for _, m := range cfg.MemberNames() {
		members[m] = true
		srcs := sources[m]
		if len(srcs) == 0 {
			errs = append(errs, fmt.Errorf("member %q: no snapshot of it (%s)", m, name(layout.InputDir(m))))
			continue
		}
		s, err := snapshot.ParseStrictSources(m, name(layout.InputDir(m)), srcs, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.Snapshots = append(w.Snapshots, s)
	}
	var strays []string
	for m := range sources {
		if !members[m] {
			strays = append(strays, m)
		}
	}
	sort.Strings(strays)
	for _, m := range strays {
		errs = append(errs, fmt.Errorf("%s: no member %q in the ClusterSet; remove its snapshot or add the member", name(layout.InputDir(m)), m))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return w, nil
}

// Render renders the world as the loop did: the members its health says
// were stale left out, the committed allocations kept, the held imports
// held.
func (w *World) Render() error {
	snapshot.DropStale(w.Snapshots, w.Committed.Health)
	out, err := render.RenderWith(w.Config, w.Snapshots, render.Options{Committed: w.Committed.Report.Allocations(), Held: w.Committed.Review.Held(),
		Staged: rollout.Staging(w.Committed.Rollouts, w.Snapshots)})
	if err != nil {
		return err
	}
	files, err := layout.Files(out)
	if err != nil {
		return err
	}
	w.Output, w.Files = out, files
	return nil
}
