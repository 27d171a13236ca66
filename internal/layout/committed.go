// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mcs-gitops/mcs-gitops/internal/rollout"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Committed is what a commit says about the world: each member's last
// snapshot, its health, and the report, whose gateways carry the TCP port
// allocations the next render keeps.
type Committed struct {
	// Inputs are the members' snapshots as formatted, by member name
	// (JoinInputs).
	Inputs map[string][]byte
	Health map[string]snapshot.Health
	Report *render.Report
	// Review is status/review.yaml, empty outside review mode.
	Review *ReviewState
	// Rollouts are status/rollouts.yaml: the staged rollouts in
	// progress, none when the file is absent.
	Rollouts *rollout.State
	// Inventory is status/inventory.yaml, nil when absent.
	Inventory *InventoryRecord
	// Records are the RecordFiles the commit holds, as committed.
	Records map[string][]byte
}

// RecordFiles are the loop's records of what it saw and decided (the
// members' health, review mode's state), which no render of inputs/ can
// make: an offline render (render, render --check) carries them over as
// they are, so a commit of the loop renders to itself.
var RecordFiles = []string{HealthFile, ReviewFile, RolloutsFile, InventoryFile}

// CommittedRoots are the paths ReadCommitted needs of a commit.
var CommittedRoots = []string{InputsDir, StatusDir}

// CommittedFile reports whether ReadCommitted reads the file at p (a
// slash-separated path under CommittedRoots): a snapshot, members.yaml,
// review.yaml, gateways.yaml or a service's report. A reader of a tree on
// disk may skip anything else.
func CommittedFile(p string) bool {
	if _, ok := InputMember(p); ok {
		return true
	}
	if _, _, ok := serviceStatus(p); ok {
		return true
	}
	return p == HealthFile || p == ReviewFile || p == GatewaysFile || p == RolloutsFile || p == InventoryFile
}

// KeptFiles are the committed files a render keeps something from: the
// gateway port allocations, the imports review mode holds and the
// rollouts in progress. Every other committed file only describes the
// last render.
var KeptFiles = []string{GatewaysFile, ReviewFile, RolloutsFile, InventoryFile}

// ReadCommitted reads a commit's files (keys relative to the repository
// sub-path; at least those under CommittedRoots) back. Nil files, as of
// an empty repository, give an empty state.
func ReadCommitted(files map[string][]byte) (*Committed, error) {
	if files == nil {
		return readCommitted(nil, nil, nil)
	}
	report, err := readReport(files)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return readCommitted(files, JoinInputs(files), report)
}

// ReadCommittedAfter is ReadCommitted(files) for a tree that differs from
// the one prev was read from only at the paths in changed (written or
// removed), and costs what changed: only the reports of changed files are
// parsed, and inputs are the members' snapshots as JoinInputs(files)
// gives them, which the loop has already. The loop reads its own commits
// back through it: reading and parsing every file was a fifth of a
// one-change cycle at 20 members x 1,000 services. prev is shared, not
// copied, and neither may be modified.
func ReadCommittedAfter(prev *Committed, files map[string][]byte, changed map[string]bool, inputs map[string][]byte) (*Committed, error) {
	report, err := reportAfter(prev.Report, files, changed)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return readCommitted(files, inputs, report)
}

// reportAfter is readReport of files, taking the services whose report
// file is not in changed from prev.
func reportAfter(prev *render.Report, files map[string][]byte, changed map[string]bool) (*render.Report, error) {
	gws, err := readGateways(files)
	if err != nil {
		return nil, err
	}
	at := make(map[[2]string]int, len(prev.Services))
	for i, s := range prev.Services {
		at[[2]string{s.Namespace, s.Name}] = i
	}
	services := slices.Clone(prev.Services)
	gone := map[int]bool{}
	added := false
	for _, p := range slices.Sorted(maps.Keys(changed)) {
		ns, name, ok := serviceStatus(p)
		if !ok {
			continue
		}
		i, had := at[[2]string{ns, name}]
		data, present := files[p]
		if !present {
			if had {
				gone[i] = true
			}
			continue
		}
		s, err := serviceReportAt(p, data, ns, name)
		if err != nil {
			return nil, err
		}
		if had {
			services[i] = *s
			continue
		}
		services = append(services, *s)
		added = true
	}
	kept := make([]render.ServiceReport, 0, len(services))
	for i, s := range services {
		if !gone[i] {
			kept = append(kept, s)
		}
	}
	if added {
		sortServices(kept)
	}
	return &render.Report{Services: kept, Gateways: gws}, nil
}

func readCommitted(files, inputs map[string][]byte, report *render.Report) (*Committed, error) {
	c := &Committed{Inputs: map[string][]byte{}, Health: map[string]snapshot.Health{}, Report: &render.Report{}, Review: &ReviewState{},
		Rollouts: &rollout.State{}, Records: map[string][]byte{}}
	if files == nil {
		return c, nil
	}
	for _, p := range RecordFiles {
		if b, ok := files[p]; ok {
			c.Records[p] = b
		}
	}
	c.Inputs, c.Report = inputs, report
	var err error
	if b, ok := files[HealthFile]; ok {
		if c.Health, err = ParseHealth(b); err != nil {
			return nil, err
		}
	}
	if c.Review, err = ParseReviewState(files[ReviewFile]); err != nil {
		return nil, err
	}
	if c.Rollouts, err = rollout.Parse(files[RolloutsFile]); err != nil {
		return nil, fmt.Errorf("%s: %w", RolloutsFile, err)
	}
	if c.Inventory, err = ParseInventory(files[InventoryFile]); err != nil {
		return nil, err
	}
	return c, nil
}
