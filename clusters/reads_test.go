// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// What Resolve gets of each result: the snapshot of a member that was
// read (a gateway lookup that failed does not make it unread), and for one
// that was not, its reason, Unreachable when the read gave none.
func TestReads(t *testing.T) {
	s := &snapshot.Snapshot{Member: "a"}
	got := Reads([]Result{
		{Member: "a", Snapshot: s, GatewayErr: errors.New("no such host")},
		{Member: "b", Err: errors.New("refused")},
		{Member: "c", Err: errors.New("401"), Reason: ReasonUnauthorized},
		{Member: "d", Snapshot: s, Err: errors.New("a snapshot with an error is not a read")},
	})
	assert.Equal(t, []snapshot.Read{
		{Member: "a", Snapshot: s, GatewayUnresolved: true},
		{Member: "b", Reason: ReasonUnreachable},
		{Member: "c", Reason: ReasonUnauthorized},
		{Member: "d", Reason: ReasonUnreachable},
	}, got)
}
