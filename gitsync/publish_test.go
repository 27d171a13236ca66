// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Another writer pushes between our render and our push: Publish must
// fetch, reset, render again on top of the new HEAD and land a commit
// that keeps the other writer's change.
func TestPublishRetriesAfterConcurrentPush(t *testing.T) {
	bare := bareRemote(t)
	ctx := context.Background()
	ours := open(t, bare)
	theirs := open(t, bare)
	_, _, err := Publish(ctx, ours, 3, func(context.Context) (map[string][]byte, []string, Message, error) {
		return rendered(), treeRoots, StaticMessage("base"), nil
	})
	require.NoError(t, err)
	require.NoError(t, theirs.ResetToRemote(ctx))

	calls := 0
	var heads []string
	hash, changed, err := Publish(ctx, ours, 3, func(context.Context) (map[string][]byte, []string, Message, error) {
		calls++
		head, err := ours.Head()
		require.NoError(t, err)
		heads = append(heads, head.String())
		prev, err := ours.ReadFile(head, "inputs/theirs.yaml")
		if calls == 1 {
			require.Error(t, err)
			// The concurrent push lands right now.
			_, changed, err := theirs.Commit(map[string][]byte{"inputs/theirs.yaml": []byte("t\n")}, []string{"inputs/theirs.yaml"}, StaticMessage("theirs"))
			require.NoError(t, err)
			require.True(t, changed)
			require.NoError(t, theirs.Push(ctx))
		} else {
			require.NoError(t, err, "the retry renders on top of the other writer's commit")
			assert.Equal(t, "t\n", string(prev))
		}
		files := rendered()
		files["status/web/api.yaml"] = []byte("ours\n")
		return files, treeRoots, StaticMessage(fmt.Sprintf("ours (attempt %d)", calls)), nil
	})
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, 2, calls)
	assert.NotEqual(t, heads[0], heads[1])

	files, c := remoteTree(t, bare)
	assert.Equal(t, hash, c.Hash)
	assert.Equal(t, "ours (attempt 2)\n", c.Message)
	assert.Equal(t, "t\n", files["deploy/mcs/inputs/theirs.yaml"])
	assert.Equal(t, "ours\n", files["deploy/mcs/status/web/api.yaml"])
	require.Len(t, c.ParentHashes, 1)
	parent, err := ours.repo.CommitObject(c.ParentHashes[0])
	require.NoError(t, err)
	assert.Equal(t, "theirs\n", parent.Message)
}

func TestPublishGivesUpAfterRetries(t *testing.T) {
	bare := bareRemote(t)
	ctx := context.Background()
	ours := open(t, bare)
	theirs := open(t, bare)
	calls := 0
	_, _, err := Publish(ctx, ours, 2, func(context.Context) (map[string][]byte, []string, Message, error) {
		calls++
		require.NoError(t, theirs.ResetToRemote(ctx))
		_, _, err := theirs.Commit(map[string][]byte{"inputs/x.yaml": []byte(fmt.Sprint(calls))}, []string{"inputs"}, StaticMessage("theirs"))
		require.NoError(t, err)
		require.NoError(t, theirs.Push(ctx))
		return rendered(), treeRoots, StaticMessage("ours"), nil
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrPushRejected)
	assert.Contains(t, err.Error(), "3 push attempts")
	assert.Equal(t, 3, calls)
}

func TestPublishNoChangeNoCommit(t *testing.T) {
	bare := bareRemote(t)
	ctx := context.Background()
	r := open(t, bare)
	produce := func(context.Context) (map[string][]byte, []string, Message, error) {
		return rendered(), treeRoots, StaticMessage("x"), nil
	}
	first, changed, err := Publish(ctx, r, 1, produce)
	require.NoError(t, err)
	require.True(t, changed)
	again, changed, err := Publish(ctx, r, 1, produce)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, first, again)
}

// A commit whose push failed for another reason is pushed by the next
// Publish even when nothing changed since.
func TestPublishPushesLeftoverCommit(t *testing.T) {
	bare := bareRemote(t)
	ctx := context.Background()
	r := open(t, bare)
	hash, _, err := r.Commit(rendered(), treeRoots, StaticMessage("not pushed"))
	require.NoError(t, err)
	_, changed, err := Publish(ctx, r, 1, func(context.Context) (map[string][]byte, []string, Message, error) {
		return rendered(), treeRoots, StaticMessage("x"), nil
	})
	require.NoError(t, err)
	assert.False(t, changed)
	_, c := remoteTree(t, bare)
	assert.Equal(t, hash, c.Hash)
}

func TestPublishProduceErrorStops(t *testing.T) {
	r := open(t, bareRemote(t))
	boom := errors.New("boom")
	_, _, err := Publish(context.Background(), r, 3, func(context.Context) (map[string][]byte, []string, Message, error) {
		return nil, nil, nil, boom
	})
	assert.ErrorIs(t, err, boom)
}
