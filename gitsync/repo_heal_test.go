// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process killed while go-git rewrote a reference in place leaves it
// empty; every restart then failed to open the clone (exit 3, a
// CrashLoopBackOff) until someone deleted the work directory. Open moves
// such a clone aside, clones again and says so; the pushed history is
// all there.
func TestOpenHealsATornClone(t *testing.T) {
	for _, torn := range []string{
		filepath.Join(".git", "refs", "heads", "main"),
		filepath.Join(".git", "refs", "remotes", "origin", "main"),
		filepath.Join(".git", "HEAD"),
	} {
		t.Run(filepath.ToSlash(torn), func(t *testing.T) {
			bare := bareRemote(t)
			workdir := filepath.Join(t.TempDir(), "clone")
			a := open(t, bare, func(o *Options) { o.Workdir = workdir })
			pushed, _, err := a.Commit(rendered(), treeRoots, StaticMessage("first"))
			require.NoError(t, err)
			require.NoError(t, a.Push(context.Background()))
			require.NoError(t, os.WriteFile(filepath.Join(workdir, torn), nil, 0o644))

			var logs bytes.Buffer
			b := open(t, bare, func(o *Options) {
				o.Workdir = workdir
				o.Log = slog.New(slog.NewTextHandler(&logs, nil))
			})
			head, err := b.Head()
			require.NoError(t, err)
			assert.Equal(t, pushed, head, "the clone is the remote's again")
			data, err := os.ReadFile(filepath.Join(b.Dir(), "status", "web", "api.yaml"))
			require.NoError(t, err)
			assert.NotEmpty(t, data, "the worktree holds HEAD")
			assert.Contains(t, logs.String(), "moved aside")
			aside, err := filepath.Glob(workdir + ".torn-*")
			require.NoError(t, err)
			require.Len(t, aside, 1, "the torn clone is kept beside it, for a person to look at")

			// Torn again: one clone kept aside, not one per restart.
			require.NoError(t, os.WriteFile(filepath.Join(workdir, torn), nil, 0o644))
			open(t, bare, func(o *Options) { o.Workdir = workdir })
			aside, err = filepath.Glob(workdir + ".torn-*")
			require.NoError(t, err)
			assert.Len(t, aside, 1)
		})
	}
}

// What is not a torn clone is not healed: a workdir holding another
// repository's clone is a mistake to report, and a remote that cannot be
// reached leaves the clone alone.
func TestOpenDoesNotHealWhatIsNotTorn(t *testing.T) {
	bare := bareRemote(t)
	workdir := filepath.Join(t.TempDir(), "clone")
	a := open(t, bare, func(o *Options) { o.Workdir = workdir })
	_, _, err := a.Commit(rendered(), treeRoots, StaticMessage("first"))
	require.NoError(t, err)
	require.NoError(t, a.Push(context.Background()))

	_, err = Open(context.Background(), Options{URL: bareRemote(t), Workdir: workdir, Log: quiet})
	require.ErrorContains(t, err, "holds a clone of another repository")

	require.NoError(t, os.Rename(bare, bare+".gone"))
	_, err = Open(context.Background(), Options{URL: bare, Workdir: workdir, Log: quiet})
	require.Error(t, err, "the remote is gone")
	require.NoError(t, os.Rename(bare+".gone", bare))
	aside, err := filepath.Glob(workdir + ".torn-*")
	require.NoError(t, err)
	assert.Empty(t, aside, "nothing was moved aside")
	open(t, bare, func(o *Options) { o.Workdir = workdir })
}
