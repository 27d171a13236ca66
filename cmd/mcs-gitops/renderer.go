// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"path/filepath"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// historyDepth is how far back render --check looks for the loop's last
// commit.
const historyDepth = 1000

// rendererChange is a stale tree whose difference is the renderer's
// alone: the checkout holds exactly what the loop's last commit holds,
// inputs and rendered files, and another build rendered that commit.
type rendererChange struct {
	Commit     string `json:"commit"`
	RenderedBy string `json:"renderedBy"`
	This       string `json:"this"`
}

// onlyRenderer tells whether the tree under out differs from this build's
// render only because another build rendered it. It needs the repository
// holding out, with history back to the loop's last commit (a shallow
// clone of depth 1 has it only when HEAD is that commit), and the
// config and inputs render read to be the ones beside out. Anything it
// cannot tell is "no": the plain stale message is never wrong.
func onlyRenderer(out string, src *sourceFlags) *rendererChange {
	if !sameFile(src.config, filepath.Join(out, layout.ConfigFile)) || !sameFile(src.inputs, filepath.Join(out, layout.InputsDir)) {
		return nil
	}
	root, rel, err := gitsync.LocalRoot(out)
	if err != nil {
		return nil
	}
	repo, err := gitsync.OpenLocal(root, rel)
	if err != nil {
		return nil
	}
	head, err := repo.Resolve("HEAD")
	if err != nil {
		return nil
	}
	commit, msg, ok, err := repo.LastMatching(head, func(m string) bool {
		_, loop, _ := layout.LoopCommit(m)
		return loop
	}, historyDepth)
	if err != nil || !ok {
		return nil
	}
	by, _, err := layout.LoopCommit(msg)
	this := layout.RenderedBy{Version: buildinfo.Read().Version, Layout: layout.Version}
	if err != nil || by == this {
		return nil
	}
	files, err := repo.Files(commit, layout.Roots...)
	if err != nil {
		return nil
	}
	if _, changes, err := gitsync.DiffTree(out, files, layout.Roots); err != nil || !changes.Empty() {
		return nil
	}
	return &rendererChange{Commit: commit.String(), RenderedBy: by.Describe(), This: this.Describe()}
}

func (r *rendererChange) Error() string {
	return fmt.Sprintf("the difference is mcs-gitops's, not the ClusterSet's: commit %s, whose config and inputs this checkout holds unchanged, was rendered by %s; this is %s. "+
		"Run this version's mcs-gitops render and commit that alone, or let its sync migrate the repository; or run the loop's version here (docs/versioning.md)",
		r.Commit[:12], r.RenderedBy, r.This)
}

// sameFile says whether paths a and b name the same file, as far as their
// absolute forms tell.
func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
