// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"

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
	// Records are the RecordFiles the commit holds, as committed.
	Records map[string][]byte
}

// RecordFiles are the loop's records of what it saw and decided (the
// members' health, review mode's state), which no render of inputs/ can
// make: an offline render (render, render --check) carries them over as
// they are, so a commit of the loop renders to itself.
var RecordFiles = []string{HealthFile, ReviewFile}

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
	return p == HealthFile || p == ReviewFile || p == GatewaysFile
}

// KeptFiles are the committed files a render keeps something from: the
// gateway port allocations and the imports review mode holds. Every other
// committed file only describes the last render.
var KeptFiles = []string{GatewaysFile, ReviewFile}

// ReadCommitted reads a commit's files (keys relative to the repository
// sub-path; at least those under CommittedRoots) back. Nil files, as of
// an empty repository, give an empty state.
func ReadCommitted(files map[string][]byte) (*Committed, error) {
	return readCommitted(files, JoinInputs, nil)
}

// ReadCommittedAfter is ReadCommitted(files) for a tree that differs from
// the one prev was read from only at the paths in changed (written or
// removed): a service's report whose file did not change is prev's, not
// parsed again. The loop reads its own commits back through it: parsing
// every report was a fifth of a one-change cycle at 20 members x 1,000
// services. prev is shared, not copied, and neither may be modified.
func ReadCommittedAfter(prev *Committed, files map[string][]byte, changed map[string]bool) (*Committed, error) {
	byName := make(map[[2]string]int, len(prev.Report.Services))
	for i, s := range prev.Report.Services {
		byName[[2]string{s.Namespace, s.Name}] = i
	}
	// A member's inputs are joined again only if one of its parts changed.
	again := map[string]bool{}
	for p := range changed {
		if m, ok := InputMember(p); ok {
			again[m] = true
		}
	}
	inputs := func(files map[string][]byte) map[string][]byte {
		if len(again) == 0 {
			return prev.Inputs
		}
		parts := map[string][]byte{}
		for p, b := range files {
			if m, ok := InputMember(p); ok && again[m] {
				parts[p] = b
			}
		}
		out := JoinInputs(parts)
		for m, b := range prev.Inputs {
			if _, ok := out[m]; !ok && !again[m] {
				out[m] = b
			}
		}
		return out
	}
	return readCommitted(files, inputs, func(p string) (render.ServiceReport, bool) {
		if changed[p] {
			return render.ServiceReport{}, false
		}
		ns, name, _ := serviceStatus(p)
		i, ok := byName[[2]string{ns, name}]
		if !ok {
			return render.ServiceReport{}, false
		}
		return prev.Report.Services[i], true
	})
}

func readCommitted(files map[string][]byte, inputs func(map[string][]byte) map[string][]byte, known func(path string) (render.ServiceReport, bool)) (*Committed, error) {
	c := &Committed{Inputs: map[string][]byte{}, Health: map[string]snapshot.Health{}, Report: &render.Report{}, Review: &ReviewState{},
		Records: map[string][]byte{}}
	if files == nil {
		return c, nil
	}
	for _, p := range RecordFiles {
		if b, ok := files[p]; ok {
			c.Records[p] = b
		}
	}
	c.Inputs = inputs(files)
	var err error
	if b, ok := files[HealthFile]; ok {
		if c.Health, err = ParseHealth(b); err != nil {
			return nil, err
		}
	}
	if c.Review, err = ParseReviewState(files[ReviewFile]); err != nil {
		return nil, err
	}
	if c.Report, err = readReport(files, known); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return c, nil
}
