// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// sshKey is a fresh ed25519 key: the OpenSSH private key file and the
// authorized_keys line of its public half.
func sshKey(t *testing.T) (private []byte, public string) { return sshKeyTB(t) }

func sshKeyTB(t testing.TB) (private []byte, public string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	sp, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	return pem.EncodeToMemory(block), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
}

// pgpKey is a fresh OpenPGP key (EdDSA, which gpg 2.2 reads), armored:
// the private key block and the public one.
func pgpKey(t *testing.T, name, email string) (private, public []byte) {
	return pgpKeyTB(t, name, email)
}

func pgpKeyTB(t testing.TB, name, email string) (private, public []byte) {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", email, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	require.NoError(t, err)
	var priv, pub bytes.Buffer
	w, err := armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	require.NoError(t, err)
	require.NoError(t, e.SerializePrivate(w, nil))
	require.NoError(t, w.Close())
	w, err = armor.Encode(&pub, openpgp.PublicKeyType, nil)
	require.NoError(t, err)
	require.NoError(t, e.Serialize(w))
	require.NoError(t, w.Close())
	return priv.Bytes(), pub.Bytes()
}

// gpgHome is an empty GNUPGHOME, short enough for gpg-agent's socket
// path; its agent is stopped at the end.
func gpgHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "gpg")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o700))
	t.Cleanup(func() {
		kill := exec.Command("gpgconf", "--kill", "gpg-agent")
		kill.Env = append(os.Environ(), "GNUPGHOME="+dir)
		_ = kill.Run()
		os.RemoveAll(dir)
	})
	return dir
}

// run runs a real command (git, gpg) in dir; it fails the test unless
// the command succeeds, and returns its combined output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, name, args...)
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return out
}

func runErr(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=Human", "GIT_AUTHOR_EMAIL=human@example.com",
		"GIT_COMMITTER_NAME=Human", "GIT_COMMITTER_EMAIL=human@example.com")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitVerifySSH runs git verify-commit with allowed signers holding pub.
func gitVerifySSH(t *testing.T, repo string, commit plumbing.Hash, pub string) (string, error) {
	t.Helper()
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	require.NoError(t, os.WriteFile(signers, []byte("bot@example.com "+pub+"\n"), 0o644))
	return runErr(repo, nil, "git", "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+signers, "verify-commit", "-v", commit.String())
}

// gitVerifyPGP runs git verify-commit with a keyring holding pub.
func gitVerifyPGP(t *testing.T, repo string, commit plumbing.Hash, pub []byte) (string, error) {
	t.Helper()
	home := gpgHome(t)
	f := filepath.Join(home, "pub.asc")
	require.NoError(t, os.WriteFile(f, pub, 0o644))
	env := []string{"GNUPGHOME=" + home}
	run(t, repo, env, "gpg", "--batch", "--import", f)
	return runErr(repo, env, "git", "verify-commit", "-v", commit.String())
}

func TestSignedCommitsPassGitVerifyCommit(t *testing.T) {
	sshPriv, sshPub := sshKey(t)
	pgpPriv, pgpPub := pgpKey(t, "mcs-gitops", "bot@example.com")
	sshSigner, err := NewSSHSigner(sshPriv, nil)
	require.NoError(t, err)
	pgpSigner, err := NewOpenPGPSigner(pgpPriv, nil)
	require.NoError(t, err)
	_, otherPub := sshKey(t)

	for _, tc := range []struct {
		name   string
		signer Signer
		verify func(t *testing.T, repo string, h plumbing.Hash) (string, error)
		header string
	}{
		{"ssh", sshSigner, func(t *testing.T, repo string, h plumbing.Hash) (string, error) {
			return gitVerifySSH(t, repo, h, sshPub)
		}, "-----BEGIN SSH SIGNATURE-----"},
		{"openpgp", pgpSigner, func(t *testing.T, repo string, h plumbing.Hash) (string, error) {
			return gitVerifyPGP(t, repo, h, pgpPub)
		}, "-----BEGIN PGP SIGNATURE-----"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare := bareRemote(t)
			r := open(t, bare, func(o *Options) {
				o.Signer = tc.signer
				o.Verify = NewVerifier(nil, tc.signer.Public(), plumbing.ZeroHash)
			})
			var hashes []plumbing.Hash
			for i, msg := range []string{"first", "second"} {
				files := rendered()
				files["status/web/api.yaml"] = []byte(msg + "\n")
				hash, changed, err := Publish(context.Background(), r, 0, func(context.Context) (map[string][]byte, []string, Message, error) {
					return files, treeRoots, StaticMessage(msg), nil
				})
				require.NoError(t, err, "commit %d", i)
				require.True(t, changed)
				hashes = append(hashes, hash)
			}
			_, c := remoteTree(t, bare)
			assert.True(t, strings.HasPrefix(c.PGPSignature, tc.header), "the signature is in the gpgsig header")
			for _, h := range hashes {
				out, err := tc.verify(t, bare, h)
				assert.NoError(t, err, "git verify-commit %s accepts the loop's commit:\n%s", h, out)
				assert.Regexp(t, `Good "git" signature|Good signature from "mcs-gitops <bot@example.com>"`, out)
				assert.NoError(t, r.Verify(h))
			}
			if tc.name == "ssh" {
				out, err := gitVerifySSH(t, bare, hashes[1], otherPub)
				assert.Error(t, err, "git verify-commit refuses it with another key:\n%s", out)
			}
		})
	}
}

// The signature is armored the way ssh-keygen armors it, line for line.
func TestSSHArmorMatchesSSHKeygen(t *testing.T) {
	priv, _ := sshKey(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id")
	require.NoError(t, os.WriteFile(keyFile, priv, 0o600))
	msg := filepath.Join(dir, "msg")
	require.NoError(t, os.WriteFile(msg, []byte("tree 0\n\nhello\n"), 0o644))
	run(t, dir, nil, "ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", keyFile, msg)
	want, err := os.ReadFile(msg + ".sig")
	require.NoError(t, err)
	s, err := NewSSHSigner(priv, nil)
	require.NoError(t, err)
	got, err := s.Sign([]byte("tree 0\n\nhello\n"), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "ed25519 signatures are deterministic: the bytes are ssh-keygen's")
}

// humanRepo is a non-bare repository made by real git, on branch main.
func humanRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, nil, "git", "init", "-q", "-b", "main")
	return dir
}

// gitCommit makes a commit with real git, with extra -c settings and
// commit flags, and returns its hash.
func gitCommit(t *testing.T, dir string, env []string, config []string, flags ...string) plumbing.Hash {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(time.Now().String()+string(rune('a'+len(flags)))), 0o644))
	run(t, dir, env, "git", "add", "f")
	args := []string{}
	for _, c := range config {
		args = append(args, "-c", c)
	}
	args = append(args, "commit", "-q", "--allow-empty")
	args = append(args, flags...)
	run(t, dir, env, "git", args...)
	return plumbing.NewHash(strings.TrimSpace(run(t, dir, env, "git", "rev-parse", "HEAD")))
}

// tamper stores a copy of commit with another message and the same
// signature, and returns the copy's hash.
func tamper(t *testing.T, dir string, h plumbing.Hash) plumbing.Hash {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	c, err := repo.CommitObject(h)
	require.NoError(t, err)
	forged := *c
	forged.Message = "something else\n"
	obj := repo.Storer.NewEncodedObject()
	require.NoError(t, forged.Encode(obj))
	fh, err := repo.Storer.SetEncodedObject(obj)
	require.NoError(t, err)
	return fh
}

func refusal(t *testing.T, err error) *VerifyError {
	t.Helper()
	var ve *VerifyError
	require.True(t, errors.As(err, &ve), "a *VerifyError, got %v", err)
	return ve
}

// Commits signed by real git (ssh-keygen and gpg) pass Verify; unsigned,
// unknown-key and tampered ones are refused with the reason, and git
// verify-commit agrees each time.
func TestVerifyCommitsSignedByGit(t *testing.T) {
	t.Run("ssh", func(t *testing.T) {
		priv, pub := sshKey(t)
		strangerPriv, _ := sshKey(t)
		dir := humanRepo(t)
		keys := t.TempDir()
		keyFile, strangerFile := filepath.Join(keys, "id"), filepath.Join(keys, "stranger")
		require.NoError(t, os.WriteFile(keyFile, priv, 0o600))
		require.NoError(t, os.WriteFile(strangerFile, strangerPriv, 0o600))
		sshCfg := func(key string) []string { return []string{"gpg.format=ssh", "user.signingkey=" + key} }

		signed := gitCommit(t, dir, nil, sshCfg(keyFile), "-S", "-m", "signed by alice")
		human, err := ParseSSHPublicKey("alice", []byte(pub))
		require.NoError(t, err)
		r, err := Open(context.Background(), Options{URL: dir, Branch: "main", Log: quiet,
			Verify: NewVerifier([]*PublicKey{human}, nil, plumbing.ZeroHash)})
		require.NoError(t, err)
		require.NoError(t, r.Verify(signed), "a commit git signed with a listed key is accepted")
		_, err = gitVerifySSH(t, dir, signed, pub)
		require.NoError(t, err)

		forged := tamper(t, dir, signed)
		ve := refusal(t, r.Verify(forged))
		assert.Equal(t, VerifyBadSignature, ve.Reason)
		assert.Contains(t, ve.Error(), "has a bad signature")
		out, err := gitVerifySSH(t, dir, forged, pub)
		assert.Error(t, err, "git refuses the tampered commit too:\n%s", out)

		stranger := gitCommit(t, dir, nil, sshCfg(strangerFile), "-S", "-m", "signed by a stranger")
		ve = refusal(t, r.Verify(stranger))
		assert.Equal(t, VerifyUnknownKey, ve.Reason)
		strangerSigner, err := NewSSHSigner(strangerPriv, nil)
		require.NoError(t, err)
		assert.Contains(t, ve.Error(), "signed by a key not in spec.git.verify (fingerprint "+strangerSigner.Public().Fingerprint()+")")
		assert.Contains(t, ve.Error(), "Human <human@example.com>")
		assert.Contains(t, ve.Error(), `"signed by a stranger"`)
		out, err = gitVerifySSH(t, dir, stranger, pub)
		assert.Error(t, err, "git refuses the stranger's signature too:\n%s", out)

		unsigned := gitCommit(t, dir, nil, nil, "-m", "not signed")
		ve = refusal(t, r.Verify(unsigned))
		assert.Equal(t, VerifyUnsigned, ve.Reason)
		assert.Equal(t, unsigned, ve.Commit)
		assert.Contains(t, ve.Error(), "commit "+unsigned.String()[:12]+` (Human <human@example.com>, "not signed") is not signed`)
		out, err = gitVerifySSH(t, dir, unsigned, pub)
		assert.Error(t, err, "git refuses the unsigned commit too:\n%s", out)
	})

	t.Run("gpg", func(t *testing.T) {
		home := gpgHome(t)
		env := []string{"GNUPGHOME=" + home}
		run(t, home, env, "gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Human <human@example.com>", "ed25519", "sign", "never")
		pub := run(t, home, env, "gpg", "--armor", "--export", "human@example.com")
		dir := humanRepo(t)
		signed := gitCommit(t, dir, env, []string{"user.signingkey=human@example.com"}, "-S", "-m", "signed with gpg")
		out, err := runErr(dir, env, "git", "verify-commit", signed.String())
		require.NoError(t, err, "%s", out)

		human, err := ParseOpenPGPPublicKey("human", []byte(pub))
		require.NoError(t, err)
		_, strangerPub := pgpKey(t, "Stranger", "s@example.com")
		stranger, err := ParseOpenPGPPublicKey("stranger", strangerPub)
		require.NoError(t, err)
		r, err := Open(context.Background(), Options{URL: dir, Branch: "main", Log: quiet,
			Verify: NewVerifier([]*PublicKey{human}, nil, plumbing.ZeroHash)})
		require.NoError(t, err)
		require.NoError(t, r.Verify(signed), "a commit gpg signed with a listed key is accepted")

		ve := refusal(t, r.Verify(tamper(t, dir, signed)))
		assert.Equal(t, VerifyBadSignature, ve.Reason)

		other, err := Open(context.Background(), Options{URL: dir, Branch: "main", Log: quiet,
			Verify: NewVerifier([]*PublicKey{stranger}, nil, plumbing.ZeroHash)})
		require.NoError(t, err)
		ve = refusal(t, other.Verify(signed))
		assert.Equal(t, VerifyUnknownKey, ve.Reason)
		assert.Contains(t, ve.Error(), "fingerprint "+human.Fingerprint())
	})
}

// storeCommitOn writes a commit with the given parents (the tree of the
// first, or an empty one), signed by s when not nil, and moves main to it.
func storeCommitOn(t testing.TB, r *Repo, s Signer, msg string, parents ...plumbing.Hash) plumbing.Hash {
	t.Helper()
	tree := plumbing.ZeroHash
	if len(parents) > 0 {
		p, err := object.GetCommit(r.repo.Storer, parents[0])
		require.NoError(t, err)
		tree = p.TreeHash
	} else {
		obj := r.repo.Storer.NewEncodedObject()
		require.NoError(t, (&object.Tree{}).Encode(obj))
		h, err := r.repo.Storer.SetEncodedObject(obj)
		require.NoError(t, err)
		tree = h
	}
	who := object.Signature{Name: "Human", Email: "human@example.com", When: clock()}
	c := &object.Commit{Author: who, Committer: who, Message: msg + "\n", TreeHash: tree, ParentHashes: parents}
	if s != nil {
		payload, err := encodeCommit(c.Encode)
		require.NoError(t, err)
		sig, err := s.Sign(payload, who.When)
		require.NoError(t, err)
		c.PGPSignature = string(sig)
	}
	obj := r.repo.Storer.NewEncodedObject()
	require.NoError(t, c.Encode(obj))
	h, err := r.repo.Storer.SetEncodedObject(obj)
	require.NoError(t, err)
	require.NoError(t, r.repo.Storer.SetReference(plumbing.NewHashReference(r.branch, h)))
	return h
}

// The walk: a human's unsigned commit between two of the loop's is
// refused (and the loop commits nothing on top); below trustedBefore it
// is accepted; a merge brings in every parent; the walk is bounded.
func TestVerifyWalk(t *testing.T) {
	loopPriv, _ := sshKey(t)
	humanPriv, humanPub := sshKey(t)
	loopSigner, err := NewSSHSigner(loopPriv, nil)
	require.NoError(t, err)
	humanSigner, err := NewSSHSigner(humanPriv, nil)
	require.NoError(t, err)
	human, err := ParseSSHPublicKey("alice", []byte(humanPub))
	require.NoError(t, err)
	ctx := context.Background()
	publish := func(r *Repo, msg string) (plumbing.Hash, error) {
		files := rendered()
		files["status/web/api.yaml"] = []byte(msg + "\n")
		h, _, err := Publish(ctx, r, 0, func(context.Context) (map[string][]byte, []string, Message, error) {
			return files, treeRoots, StaticMessage(msg), nil
		})
		return h, err
	}

	// sneakyEdit: the loop commits, then someone pushes an unsigned
	// commit on top of it.
	sneakyEdit := func(t *testing.T) (bare string, loop *Repo, first, sneaky plumbing.Hash) {
		t.Helper()
		bare = bareRemote(t)
		loop = open(t, bare, func(o *Options) {
			o.Signer = loopSigner
			o.Verify = NewVerifier([]*PublicKey{human}, loopSigner.Public(), plumbing.ZeroHash)
		})
		first, err := publish(loop, "loop 1")
		require.NoError(t, err)
		theirs := open(t, bare)
		_, _, err = theirs.Commit(map[string][]byte{"inputs/x.yaml": []byte("x\n")}, []string{"inputs/x.yaml"}, StaticMessage("sneaky edit"))
		require.NoError(t, err)
		require.NoError(t, theirs.Push(ctx))
		sneaky, err = theirs.Head()
		require.NoError(t, err)
		return bare, loop, first, sneaky
	}

	t.Run("unsigned between loop commits", func(t *testing.T) {
		bare, loop, first, sneaky := sneakyEdit(t)
		require.NoError(t, loop.ResetToRemote(ctx))
		_, err := publish(loop, "loop 2")
		ve := refusal(t, err)
		assert.Equal(t, VerifyUnsigned, ve.Reason)
		assert.Equal(t, sneaky, ve.Commit)
		assert.Contains(t, err.Error(), `"sneaky edit") is not signed`)
		_, c := remoteTree(t, bare)
		assert.Equal(t, sneaky, c.Hash, "nothing was committed on top")
		require.NoError(t, loop.Verify(first), "the loop's own commit below stays good")

		// With trustedBefore at the human's commit, the loop goes on.
		trusting := open(t, bare, func(o *Options) {
			o.Signer = loopSigner
			o.Verify = NewVerifier([]*PublicKey{human}, loopSigner.Public(), sneaky)
		})
		next, err := publish(trusting, "loop 2")
		require.NoError(t, err)
		_, c = remoteTree(t, bare)
		assert.Equal(t, next, c.Hash)
		assert.Equal(t, []plumbing.Hash{sneaky}, c.ParentHashes)
		// A verifier that does not trust it still refuses the range, but
		// the loop's next commit stops the walk: it was checked when made.
		require.NoError(t, loop.ResetToRemote(ctx))
		require.NoError(t, loop.Verify(next))
	})

	// A person resets the branch to the loop's last signed commit after an
	// edit verification refused: a repair, not a rewrite. The refused
	// commit never became part of the line the branch must descend from
	// (TestReviewRefusesAnUnsignedRecordEdit in test/e2e failed on it).
	t.Run("reset past a refused commit is a repair", func(t *testing.T) {
		bare, loop, first, _ := sneakyEdit(t)
		require.NoError(t, loop.ResetToRemote(ctx))
		_, err := publish(loop, "loop 2")
		refusal(t, err)

		forcePush(t, bare, first)
		require.NoError(t, loop.ResetToRemote(ctx), "back to the last commit that verified")
		next, err := publish(loop, "loop 2")
		require.NoError(t, err)
		_, c := remoteTree(t, bare)
		assert.Equal(t, next, c.Hash)
		assert.Equal(t, []plumbing.Hash{first}, c.ParentHashes)
	})

	t.Run("merge, trustedBefore reached another way, limit, cache", func(t *testing.T) {
		dir := t.TempDir()
		_, err := git.PlainInit(dir, false)
		require.NoError(t, err)
		r, err := Open(ctx, Options{URL: dir, Branch: "main", Log: quiet})
		require.NoError(t, err)
		old1 := storeCommitOn(t, r, nil, "old unsigned 1")
		old2 := storeCommitOn(t, r, nil, "old unsigned 2", old1)
		side := storeCommitOn(t, r, nil, "unsigned side branch", old2)
		h1 := storeCommitOn(t, r, humanSigner, "human 1", old2)
		merge := storeCommitOn(t, r, humanSigner, "merge side", h1, side)
		mergeOld := storeCommitOn(t, r, humanSigner, "merge an old commit", h1, old1)

		v := NewVerifier([]*PublicKey{human}, loopSigner.Public(), old2)
		ve := refusal(t, v.Verify(r, merge))
		assert.Equal(t, side, ve.Commit, "every parent of a merge is walked")
		assert.Contains(t, ve.Error(), "it is below "+merge.String()[:12])
		require.NoError(t, v.Verify(r, h1))
		require.NoError(t, v.Verify(r, mergeOld), "an ancestor of trustedBefore is trusted when reached past it")
		ve = refusal(t, NewVerifier([]*PublicKey{human}, nil, plumbing.ZeroHash).Verify(r, h1))
		assert.Equal(t, old2, ve.Commit, "without trustedBefore the old history is checked")
		ve = refusal(t, NewVerifier([]*PublicKey{human}, nil, plumbing.NewHash(strings.Repeat("ab", 20))).Verify(r, h1))
		assert.Equal(t, VerifyUnreadable, ve.Reason)
		assert.Contains(t, ve.Error(), "spec.git.verify.trustedBefore is not a commit of the repository")

		chain := h1
		for i := range 4 {
			chain = storeCommitOn(t, r, humanSigner, "human "+string(rune('2'+i)), chain)
		}
		bounded := NewVerifier([]*PublicKey{human}, nil, old2)
		bounded.Limit = 3
		ve = refusal(t, bounded.Verify(r, chain))
		assert.Equal(t, VerifyTooDeep, ve.Reason)
		assert.Contains(t, ve.Error(), "checked 3 commits")
		bounded.Limit = 10
		require.NoError(t, bounded.Verify(r, chain))
		bounded.Limit = 1
		require.NoError(t, bounded.Verify(r, chain), "a verified commit is not walked again")

		loopTop := storeCommitOn(t, r, loopSigner, "loop on top of unsigned", side)
		var seen []error
		own := NewVerifier([]*PublicKey{human}, loopSigner.Public(), plumbing.ZeroHash)
		own.Observe = func(err error) { seen = append(seen, err) }
		require.NoError(t, own.Verify(r, loopTop), "below the loop's own signed commit nothing is walked")
		require.Len(t, seen, 1)
		ve = refusal(t, NewVerifier([]*PublicKey{human}, nil, plumbing.ZeroHash).Verify(r, loopTop))
		assert.Equal(t, VerifyUnknownKey, ve.Reason, "the loop's key is not a human's")
	})
}

func TestSignerFromErrorsNeverHoldTheKey(t *testing.T) {
	priv, _ := sshKey(t)
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(edPriv, "", []byte("hunter2"))
	require.NoError(t, err)
	locked := string(pem.EncodeToMemory(block))
	pgpPriv, _ := pgpKey(t, "Loop", "loop@example.com")
	for name, tc := range map[string]struct {
		format    v1alpha1.SigningFormat
		key, pass string
		want      string
	}{
		"garbage":          {v1alpha1.SigningSSH, "not a key", "", "not an OpenSSH or PEM private key"},
		"public instead":   {v1alpha1.SigningSSH, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOeF", "", "not an OpenSSH or PEM private key"},
		"ssh":              {v1alpha1.SigningSSH, string(priv), "", ""},
		"locked":           {v1alpha1.SigningSSH, locked, "", "passphrase-protected and no passphrase"},
		"wrong passphrase": {v1alpha1.SigningSSH, locked, "hunter3", "passphrase does not decrypt"},
		"passphrase":       {v1alpha1.SigningSSH, locked, "hunter2\n", ""},
		"openpgp":          {v1alpha1.SigningOpenPGP, string(pgpPriv), "", ""},
		"ssh as openpgp":   {v1alpha1.SigningOpenPGP, string(priv), "", "not an armored OpenPGP private key"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &v1alpha1.GitSigning{Format: tc.format, Key: &v1alpha1.CredentialSource{Env: "K"}}
			if tc.pass != "" {
				cfg.Passphrase = &v1alpha1.CredentialSource{Env: "P"}
			}
			s, err := SignerFrom(cfg, secrets(map[string]string{"K": tc.key, "P": tc.pass}))
			if tc.want == "" {
				require.NoError(t, err)
				require.NotNil(t, s.Public())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "environment variable K")
			assert.NotContains(t, err.Error(), tc.key)
			assert.NotContains(t, err.Error(), "hunter")
		})
	}
}

// BenchmarkVerify: a fresh Verifier walking a chain of 1000 commits signed
// by a person's SSH or OpenPGP key (what a first cycle does after a long
// run of human commits), and the cached check every later cycle makes.
func BenchmarkVerify(b *testing.B) {
	priv, pub := sshKeyTB(b)
	sshSigner, err := NewSSHSigner(priv, nil)
	require.NoError(b, err)
	sshPub, err := ParseSSHPublicKey("alice", []byte(pub))
	require.NoError(b, err)
	pgpPriv, pgpPub := pgpKeyTB(b, "Bob", "bob@example.com")
	pgpSigner, err := NewOpenPGPSigner(pgpPriv, nil)
	require.NoError(b, err)
	pgpKeyPub, err := ParseOpenPGPPublicKey("bob", pgpPub)
	require.NoError(b, err)
	for _, tc := range []struct {
		name   string
		signer Signer
		key    *PublicKey
	}{{"ssh", sshSigner, sshPub}, {"openpgp", pgpSigner, pgpKeyPub}} {
		dir := b.TempDir()
		_, err := git.PlainInit(dir, false)
		require.NoError(b, err)
		r, err := Open(context.Background(), Options{URL: dir, Branch: "main", Log: quiet})
		require.NoError(b, err)
		top := storeCommitOn(b, r, nil, "root")
		root := top
		for i := range 1000 {
			top = storeCommitOn(b, r, tc.signer, "commit "+strconv.Itoa(i), top)
		}
		b.Run(tc.name+"/walk-1000", func(b *testing.B) {
			for b.Loop() {
				require.NoError(b, NewVerifier([]*PublicKey{tc.key}, nil, root).Verify(r, top))
			}
		})
		b.Run(tc.name+"/cached", func(b *testing.B) {
			v := NewVerifier([]*PublicKey{tc.key}, nil, root)
			require.NoError(b, v.Verify(r, top))
			for b.Loop() {
				require.NoError(b, v.Verify(r, top))
			}
		})
		b.Run(tc.name+"/sign", func(b *testing.B) {
			payload := bytes.Repeat([]byte("tree 0\n"), 40)
			for b.Loop() {
				_, err := tc.signer.Sign(payload, time.Now())
				require.NoError(b, err)
			}
		})
	}
}
