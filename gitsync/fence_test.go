// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process that may have lost its leader Lease writes nothing to the
// remote: not the branch, not a proposal branch, not a deletion. The
// fence is asked right before each, and its error comes back as is.
func TestFenceRefusesEveryRemoteWrite(t *testing.T) {
	lost := errors.New("no longer the leader")
	fenced := false
	bare := bareRemote(t)
	r := open(t, bare, func(o *Options) {
		o.Fence = func() error {
			if fenced {
				return lost
			}
			return nil
		}
	})
	ctx := context.Background()
	first, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	require.NoError(t, r.Push(ctx), "the fence lets a leader push")
	_, _, err = r.CommitOn("mcs-gitops/proposals/a", first, rendered(), treeRoots, "proposal")
	require.NoError(t, err)
	require.NoError(t, r.PushBranch(ctx, "mcs-gitops/proposals/a", r.Wrote))

	fenced = true
	files := rendered()
	files["status/web/api.yaml"] = []byte("changed\n")
	_, _, err = r.Commit(files, treeRoots, StaticMessage("second"))
	require.NoError(t, err, "committing locally is not a remote write")
	assert.ErrorIs(t, r.Push(ctx), lost)
	_, remoteHead := remoteTree(t, bare)
	assert.Equal(t, first, remoteHead.Hash, "the remote did not move")
	assert.ErrorIs(t, r.PushBranch(ctx, "mcs-gitops/proposals/a", r.Wrote), lost)
	assert.ErrorIs(t, r.DeleteBranch(ctx, "mcs-gitops/proposals/a"), lost)

	fenced = false
	require.NoError(t, r.Push(ctx), "the commit goes out once the fence allows it")
	_, remoteHead = remoteTree(t, bare)
	assert.NotEqual(t, first, remoteHead.Hash)
}
