// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// message describes the commit of t given what changed in the tree.
func (t *tree) message(changes *gitsync.Changes) string {
	return layout.Message(layout.MessageInput{
		Prev: t.prev, Next: t.report, Changes: &layout.Changes{Written: changes.Written, Removed: changes.Removed},
		Members: t.events, Trailers: [][2]string{{"Snapshot-Digest", t.digest}},
	})
}
