// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// thisBuild is what the Rendered-By trailer of every commit of the loop
// says: this binary's version and the layout it writes. A later version
// reads it back to tell a change of renderer from a change of the world
// (migrate, render --check).
var thisBuild = layout.RenderedBy{Version: buildinfo.Read().Version, Layout: layout.Version}

// message describes the commit of t given what changed in the tree.
func (t *tree) message(changes *gitsync.Changes) string {
	return layout.Message(layout.MessageInput{
		Prev: t.prev, Next: t.report, Changes: &layout.Changes{Written: changes.Written, Removed: changes.Removed},
		Members: t.events, Rollouts: t.rolloutEvents(), Trailers: [][2]string{{layout.SnapshotDigestTrailer, t.digest}, thisBuild.Trailer()},
		ReportsFromChanges: true,
	})
}

func (t *tree) rolloutEvents() []string {
	if t.rollouts == nil {
		return nil
	}
	return t.rollouts.events
}
