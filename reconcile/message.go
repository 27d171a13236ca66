package reconcile

import (
	"github.com/mcs-gitops/mcs-gitops/gitsync"
)

// message describes the commit of t given what changed in the tree.
func (t *tree) message(changes *gitsync.Changes) string {
	return gitsync.Message(gitsync.MessageInput{
		Prev: t.prev, Next: t.report, Changes: changes, Health: t.events,
		Trailers: [][2]string{{"Snapshot-Digest", t.digest}},
	})
}
