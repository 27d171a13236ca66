// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// TestApplyRefVerifiesSignatures: with spec.git.signing and spec.git.verify,
// sync signs its commit and applies it; a human's unsigned commit on top
// (one that would prune west's import) is refused by apply --ref and by
// sync with exit 1 naming it, and no member is touched and nothing is
// committed; the loop's signed commit still applies.
func TestApplyRefVerifiesSignatures(t *testing.T) {
	cs := envtest.Start(t, 2)
	east, west := cs[0], cs[1]
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, east.WriteKubeconfig(filepath.Join(dir, "east.kubeconfig")))
	require.NoError(t, west.WriteKubeconfig(filepath.Join(dir, "west.kubeconfig")))
	remote := filepath.Join(dir, "remote.git")
	_, err := git.PlainInit(remote, true)
	require.NoError(t, err)

	// The loop's key, made here: never a fixture.
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "loop.key"), pem.EncodeToMemory(block), 0o600))
	pub, err := ssh.NewPublicKey(priv.Public())
	require.NoError(t, err)
	config := filepath.Join(dir, "clusterset.yaml")
	require.NoError(t, os.WriteFile(config, []byte("apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata:\n  name: t\nspec:\n  members:\n"+
		"  - name: east\n    kubeconfig: {path: east.kubeconfig}\n  - name: west\n    kubeconfig: {path: west.kubeconfig}\n"+
		"  sync:\n    memberTimeout: 3s\n  git:\n    author: {name: Platform Bot, email: bot@example.invalid}\n"+
		"    signing:\n      format: ssh\n      key: {path: loop.key}\n"+
		"    verify:\n      keys:\n      - name: loop\n        ssh: "+strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))+" loop\n"), 0o644))
	repoArgs := []string{"--config", config, "--repo", remote, "--workdir", filepath.Join(dir, "work")}

	require.NoError(t, envtest.EnsureNamespaces(ctx, east.Client, "shop"))
	require.NoError(t, envtest.EnsureNamespaces(ctx, west.Client, "shop"))
	svc := tenant.Service("shop", "cart", tenant.Port("http", 80, 8080))
	tenant.Create(t, east.Client, svc, tenant.Slice(svc, "cart-east", discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.10")...), tenant.Export("shop", "cart"))

	out, err := run(t, append([]string{"sync"}, repoArgs...)...)
	require.NoError(t, err, out)
	imported := func() bool {
		return west.Client.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, &mcsv1alpha1.ServiceImport{}) == nil
	}
	require.True(t, imported(), "the signed commit was applied")
	loopCommit := remoteHead(t, remote)
	signers := filepath.Join(dir, "allowed_signers")
	require.NoError(t, os.WriteFile(signers, append([]byte("bot@example.invalid "), ssh.MarshalAuthorizedKey(pub)...), 0o644))
	gitRun(t, remote, "-c", "gpg.ssh.allowedSignersFile="+signers, "verify-commit", loopCommit.String())

	// A person drops west's directory in an unsigned commit and pushes it.
	human := filepath.Join(dir, "human")
	gitRun(t, dir, "clone", "-q", "-b", "main", remote, human)
	gitRun(t, human, "rm", "-r", "-q", "clusters/west")
	gitRun(t, human, "commit", "-q", "-m", "drop west")
	gitRun(t, human, "push", "-q", "origin", "HEAD:main")
	unsigned := remoteHead(t, remote)
	require.NotEqual(t, loopCommit, unsigned)

	out, err = run(t, append([]string{"apply", "--ref", unsigned.String(), "--allow-empty"}, repoArgs...)...)
	assert.Equal(t, 1, exitCode(err), "output: %s", out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "commit "+unsigned.String()[:12]+` (Human <human@example.com>, "drop west") is not signed`)
	assert.True(t, imported(), "nothing was applied: west keeps its import")

	out, err = run(t, append([]string{"sync"}, repoArgs...)...)
	assert.Equal(t, 1, exitCode(err), "output: %s", out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "commit "+unsigned.String()[:12])
	assert.Contains(t, err.Error(), "is not signed")
	assert.Equal(t, unsigned, remoteHead(t, remote), "nothing was committed on top")
	assert.True(t, imported(), "nothing was applied")

	out, err = run(t, append([]string{"apply", "--ref", loopCommit.String()}, repoArgs...)...)
	require.NoError(t, err, "the loop's signed commit verifies and applies: %s", out)
	assert.Contains(t, out, "west")
}

func remoteHead(t *testing.T, bare string) plumbing.Hash {
	t.Helper()
	r, err := git.PlainOpen(bare)
	require.NoError(t, err)
	ref, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	require.NoError(t, err)
	return ref.Hash()
}

// gitRun runs the real git in dir as a person with no signing set up.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	gitOut(t, dir, args...)
}

// gitOut is gitRun returning what git printed.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=Human", "GIT_AUTHOR_EMAIL=human@example.com",
		"GIT_COMMITTER_NAME=Human", "GIT_COMMITTER_EMAIL=human@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}
