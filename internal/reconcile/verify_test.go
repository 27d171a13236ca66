// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"log/slog"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
)

// A refused commit counts under its reason and sets the refused gauge,
// which the next accepted verification clears; ApplyRef refuses before
// anything else.
func TestVerificationMetrics(t *testing.T) {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	wt, err := r.Worktree()
	require.NoError(t, err)
	head, err := wt.Commit("unsigned", &git.CommitOptions{AllowEmptyCommits: true,
		Author: &object.Signature{Name: "Human", Email: "human@example.com"}})
	require.NoError(t, err)
	branch, err := r.Head()
	require.NoError(t, err)

	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	sp, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	key, err := gitsync.ParseSSHPublicKey("loop", ssh.MarshalAuthorizedKey(sp))
	require.NoError(t, err)
	repo, err := gitsync.Open(context.Background(), gitsync.Options{URL: dir, Branch: branch.Name().Short(),
		Verify: gitsync.NewVerifier([]*gitsync.PublicKey{key}, nil, plumbing.ZeroHash)})
	require.NoError(t, err)
	m := NewMetrics()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	m.WatchVerification(repo)
	l := &Loop{Repo: repo, Metrics: m, Log: quiet}

	_, err = l.ApplyRef(context.Background(), head, false)
	var ve *gitsync.VerifyError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, gitsync.VerifyUnsigned, ve.Reason)
	assert.Equal(t, 1.0, testutil.ToFloat64(m.VerificationFailures.WithLabelValues("unsigned")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.VerificationFailures.WithLabelValues("unknown_key")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.VerificationRefused))

	m.observeVerification(nil)
	assert.Equal(t, 0.0, testutil.ToFloat64(m.VerificationRefused))
}
