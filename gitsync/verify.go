// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// PublicKey is a key whose commit signatures are accepted: an SSH key or
// an OpenPGP key (with its subkeys).
type PublicKey struct {
	// Name says whose key it is (spec.git.verify.keys[].name).
	Name string
	ssh  ssh.PublicKey
	pgp  openpgp.EntityList
}

// ParseSSHPublicKey reads a public key in the authorized_keys format
// ("ssh-ed25519 AAAA... comment"; an allowed signers line, which starts
// with the principal, works too).
func ParseSSHPublicKey(name string, line []byte) (*PublicKey, error) {
	k, _, _, _, err := ssh.ParseAuthorizedKey(line)
	if err != nil {
		return nil, fmt.Errorf("not an SSH public key line: %w", err)
	}
	return &PublicKey{Name: name, ssh: k}, nil
}

// ParseOpenPGPPublicKey reads an armored OpenPGP public key block (gpg
// --armor --export); a block of several keys accepts each.
func ParseOpenPGPPublicKey(name string, armored []byte) (*PublicKey, error) {
	list, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(armored))
	if err != nil {
		return nil, fmt.Errorf("not an armored OpenPGP public key: %w", err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("the OpenPGP key block holds no key")
	}
	return &PublicKey{Name: name, pgp: list}, nil
}

// Fingerprint is how the key is shown: ssh-keygen -l's SHA256:... for an
// SSH key, the upper-case hexadecimal fingerprint (gpg --fingerprint) of
// the first OpenPGP key.
func (k *PublicKey) Fingerprint() string {
	switch {
	case k.ssh != nil:
		return ssh.FingerprintSHA256(k.ssh)
	case len(k.pgp) > 0:
		return strings.ToUpper(hex.EncodeToString(k.pgp[0].PrimaryKey.Fingerprint))
	}
	return ""
}

// DefaultVerifyLimit bounds how many commits one Verify checks.
const DefaultVerifyLimit = 10000

// Verifier decides whether a commit may be applied: it, and every commit
// reachable from it that is not already trusted, must carry a good
// signature by one of its keys.
//
// The walk goes from the target through every parent (all parents of a
// merge) and stops below:
//
//   - a commit signed by the loop's own signing key (own). The loop
//     verifies HEAD before it renders and commits on top of it, and
//     signs only what it commits, so everything below one of its signed
//     commits was verified when that commit was made: walking it again
//     would only cost time. The own commit itself is still verified.
//     (This holds for commits made while verification was on: when it
//     is turned on over a history the loop signed without verifying,
//     set trustedBefore to the branch's head.)
//   - trustedBefore and its ancestors, accepted unchecked, so that
//     verification can be turned on over an unsigned history.
//   - a commit this Verifier already verified with everything below it
//     (a small in-process cache, so run does not walk again each cycle).
//
// At most Limit commits are checked (DefaultVerifyLimit when 0); a walk
// that would check more fails, naming trustedBefore as the way out.
type Verifier struct {
	// Limit bounds the commits one Verify checks.
	Limit int
	// Observe, when set, is called with the result of every Verify (nil
	// when the commit was accepted): the loop counts refusals in a metric.
	Observe func(error)

	ssh           map[string]*PublicKey // by SHA256 fingerprint
	keyring       openpgp.EntityList
	pgpNames      map[string]string // primary fingerprint (hex) -> key name
	own           string            // fingerprint of the loop's own key; "" when it does not sign
	trustedBefore plumbing.Hash

	mu       sync.Mutex
	verified map[plumbing.Hash]struct{} // commits verified with all their ancestry
	trusted  map[plumbing.Hash]struct{} // ancestors of trustedBefore, once needed
}

// maxVerifiedCache bounds the cache of verified commits; past it the
// cache starts over.
const maxVerifiedCache = 100000

// NewVerifier accepts signatures by keys; own is the loop's signing key
// (nil when it does not sign), always accepted and the walk's stopping
// point; trustedBefore (zero for none) and its ancestors are trusted.
func NewVerifier(keys []*PublicKey, own *PublicKey, trustedBefore plumbing.Hash) *Verifier {
	v := &Verifier{
		ssh:           map[string]*PublicKey{},
		pgpNames:      map[string]string{},
		trustedBefore: trustedBefore,
		verified:      map[plumbing.Hash]struct{}{},
	}
	add := func(k *PublicKey) {
		if k.ssh != nil {
			v.ssh[ssh.FingerprintSHA256(k.ssh)] = k
		}
		for _, e := range k.pgp {
			fp := strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint))
			if _, dup := v.pgpNames[fp]; !dup {
				v.keyring = append(v.keyring, e)
				v.pgpNames[fp] = k.Name
			}
		}
	}
	if own != nil {
		o := *own
		if o.Name == "" {
			o.Name = "spec.git.signing"
		}
		add(&o)
		v.own = o.Fingerprint()
	}
	for _, k := range keys {
		add(k)
	}
	return v
}

// VerifierFrom builds the Verifier of spec.git.verify: its keys, the
// loop's own signing key (signer, nil when it does not sign) and
// trustedBefore. A key from a source is read through read. nil config
// gives a nil Verifier: nothing is verified.
func VerifierFrom(c *v1alpha1.GitVerify, signer Signer, read func(*v1alpha1.CredentialSource) ([]byte, error)) (*Verifier, error) {
	if c == nil {
		return nil, nil
	}
	var keys []*PublicKey
	for i, kc := range c.Keys {
		field := fmt.Sprintf("spec.git.verify.keys[%d]", i)
		var (
			k   *PublicKey
			err error
		)
		switch {
		case kc.SSH != "":
			k, err = ParseSSHPublicKey(kc.Name, []byte(kc.SSH))
		case kc.OpenPGP != "":
			k, err = ParseOpenPGPPublicKey(kc.Name, []byte(kc.OpenPGP))
		case kc.Source != nil:
			b, rerr := kc.Source.Read(read, field+".source")
			if rerr != nil {
				return nil, rerr
			}
			if bytes.Contains(b, []byte("PRIVATE KEY")) {
				return nil, fmt.Errorf("%s (%s) from %s holds a private key; give the public key only", field, kc.Name, kc.Source.Describe())
			}
			if bytes.Contains(b, []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----")) {
				k, err = ParseOpenPGPPublicKey(kc.Name, b)
			} else {
				k, err = ParseSSHPublicKey(kc.Name, b)
			}
		default:
			err = fmt.Errorf("set one of ssh, openpgp and source")
		}
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", field, kc.Name, err)
		}
		keys = append(keys, k)
	}
	var trusted plumbing.Hash
	if c.TrustedBefore != "" {
		if len(c.TrustedBefore) != 40 || !plumbing.IsHash(c.TrustedBefore) {
			return nil, fmt.Errorf("spec.git.verify.trustedBefore %q is not a full commit id", c.TrustedBefore)
		}
		trusted = plumbing.NewHash(c.TrustedBefore)
	}
	var own *PublicKey
	if signer != nil {
		own = signer.Public()
	}
	return NewVerifier(keys, own, trusted), nil
}

// VerifyReason says why a commit was refused; it is the reason label of
// the verification metric.
type VerifyReason string

// Reasons of a VerifyError.
const (
	// VerifyUnsigned: the commit carries no signature.
	VerifyUnsigned VerifyReason = "unsigned"
	// VerifyUnknownKey: a signature by a key not in spec.git.verify.
	VerifyUnknownKey VerifyReason = "unknown_key"
	// VerifyBadSignature: the signature does not match the commit, cannot
	// be parsed, or its key is expired or revoked.
	VerifyBadSignature VerifyReason = "bad_signature"
	// VerifyTooDeep: more than Limit commits to check.
	VerifyTooDeep VerifyReason = "too_deep"
	// VerifyUnreadable: a commit (or trustedBefore) could not be read.
	VerifyUnreadable VerifyReason = "unreadable"
)

// VerifyReasons lists every reason, for metrics.
var VerifyReasons = []VerifyReason{VerifyUnsigned, VerifyUnknownKey, VerifyBadSignature, VerifyTooDeep, VerifyUnreadable}

// VerifyError refuses Target because of Commit (Target itself or one of
// the commits below it that had to be checked).
type VerifyError struct {
	Target, Commit  plumbing.Hash
	Author, Subject string
	Reason          VerifyReason
	// Detail is the key's fingerprint (VerifyUnknownKey) or what is wrong.
	Detail string
	Limit  int
}

func (e *VerifyError) Error() string {
	var what string
	switch e.Reason {
	case VerifyUnsigned:
		what = "is not signed"
	case VerifyUnknownKey:
		what = fmt.Sprintf("is signed by a key not in spec.git.verify (fingerprint %s)", e.Detail)
	case VerifyBadSignature:
		what = fmt.Sprintf("has a bad signature (%s)", e.Detail)
	case VerifyTooDeep:
		return fmt.Sprintf("commit %s: checked %d commits below it without reaching one signed by the loop's own key or spec.git.verify.trustedBefore; set trustedBefore to a commit you trust",
			short(e.Target), e.Limit)
	default:
		what = "cannot be read: " + e.Detail
	}
	msg := fmt.Sprintf("commit %s", short(e.Commit))
	if e.Author != "" || e.Subject != "" {
		msg += fmt.Sprintf(" (%s, %q)", e.Author, e.Subject)
	}
	msg += " " + what
	if e.Commit != e.Target {
		msg += fmt.Sprintf("; it is below %s, and every commit since the loop's last signed one must be signed by a key in spec.git.verify", short(e.Target))
	} else {
		msg += "; it must be signed by a key in spec.git.verify"
	}
	return msg
}

func short(h plumbing.Hash) string { return h.String()[:12] }

// Verify checks target with the Verifier of Options.Verify; without one,
// everything is accepted. The zero hash (no commit yet) is accepted.
func (r *Repo) Verify(target plumbing.Hash) error {
	if r.opts.Verify == nil || target.IsZero() {
		return nil
	}
	return r.opts.Verify.Verify(r, target)
}

// Verifier is Options.Verify, nil when commits are not verified.
func (r *Repo) Verifier() *Verifier { return r.opts.Verify }

// Verify checks target in r as the Verifier's doc says; a refusal is a
// *VerifyError.
func (v *Verifier) Verify(r *Repo, target plumbing.Hash) (err error) {
	if v.Observe != nil {
		defer func() { v.Observe(err) }()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.verified[target]; ok {
		return nil
	}
	limit := v.Limit
	if limit <= 0 {
		limit = DefaultVerifyLimit
	}
	queue := []plumbing.Hash{target}
	seen := map[plumbing.Hash]bool{target: true}
	var checked []plumbing.Hash
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if _, ok := v.verified[h]; ok || h == v.trustedBefore {
			continue
		}
		if len(checked) >= limit {
			return &VerifyError{Target: target, Commit: h, Reason: VerifyTooDeep, Limit: limit}
		}
		c, err := object.GetCommit(r.repo.Storer, h)
		if err != nil {
			return &VerifyError{Target: target, Commit: h, Reason: VerifyUnreadable,
				Detail: fmt.Sprintf("%v (is the clone shallow?)", err)}
		}
		own, verr := v.check(c)
		if verr != nil {
			verr.Target = target
			trusted, terr := v.belowTrusted(r, target, h)
			if terr != nil {
				return terr
			}
			if !trusted {
				return verr
			}
			continue // an ancestor of trustedBefore reached another way
		}
		checked = append(checked, h)
		if own {
			continue
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	if len(v.verified)+len(checked)+1 > maxVerifiedCache {
		v.verified = map[plumbing.Hash]struct{}{}
	}
	for _, h := range checked {
		v.verified[h] = struct{}{}
	}
	v.verified[target] = struct{}{}
	r.opts.Log.Debug("commit signatures verified", "commit", short(target), "checked", len(checked))
	return nil
}

// check verifies c's own signature: whether it is by the loop's own key,
// or why it is refused.
func (v *Verifier) check(c *object.Commit) (own bool, _ *VerifyError) {
	fail := func(reason VerifyReason, detail string) (bool, *VerifyError) {
		return false, &VerifyError{Commit: c.Hash, Author: fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email),
			Subject: truncate(subjectOf(c.Message), 72), Reason: reason, Detail: detail}
	}
	sig := strings.TrimSpace(c.PGPSignature)
	if sig == "" {
		return fail(VerifyUnsigned, "")
	}
	signed, err := encodeCommit(c.EncodeWithoutSignature)
	if err != nil {
		return fail(VerifyBadSignature, "cannot encode the commit: "+err.Error())
	}
	switch {
	case strings.HasPrefix(sig, "-----BEGIN SSH SIGNATURE-----"):
		s, err := sshsig.Unarmor([]byte(sig))
		if err != nil {
			return fail(VerifyBadSignature, "not a valid SSH signature")
		}
		fp := ssh.FingerprintSHA256(s.PublicKey)
		k, ok := v.ssh[fp]
		if !ok {
			return fail(VerifyUnknownKey, fp)
		}
		if s.Signature.Format == ssh.KeyAlgoRSA {
			// PROTOCOL.sshsig allows only rsa-sha2-256 and -512.
			return fail(VerifyBadSignature, fmt.Sprintf("by %s: an RSA signature with SHA-1", k.Name))
		}
		if err := sshsig.Verify(bytes.NewReader(signed), s, k.ssh, s.HashAlgorithm, sshNamespace); err != nil {
			return fail(VerifyBadSignature, fmt.Sprintf("by %s: %v", k.Name, err))
		}
		return fp == v.own, nil
	case strings.HasPrefix(sig, "-----BEGIN PGP SIGNATURE-----"):
		e, err := openpgp.CheckArmoredDetachedSignature(v.keyring, bytes.NewReader(signed), strings.NewReader(sig), nil)
		if errors.Is(err, pgperrors.ErrUnknownIssuer) {
			return fail(VerifyUnknownKey, pgpIssuer(sig))
		}
		if err != nil || e == nil {
			return fail(VerifyBadSignature, fmt.Sprintf("OpenPGP: %v", err))
		}
		fp := strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint))
		return fp == v.own, nil
	}
	return fail(VerifyBadSignature, "neither an SSH nor an OpenPGP signature (x509 signatures are not supported)")
}

// pgpIssuer names the key an OpenPGP signature says it was made by.
func pgpIssuer(armored string) string {
	block, err := armor.Decode(strings.NewReader(armored))
	if err != nil {
		return "unknown"
	}
	p, err := packet.NewReader(block.Body).Next()
	if err != nil && err != io.EOF {
		return "unknown"
	}
	s, ok := p.(*packet.Signature)
	switch {
	case !ok:
		return "unknown"
	case len(s.IssuerFingerprint) > 0:
		return strings.ToUpper(hex.EncodeToString(s.IssuerFingerprint))
	case s.IssuerKeyId != nil:
		return fmt.Sprintf("key ID %016X", *s.IssuerKeyId)
	}
	return "unknown"
}

// belowTrusted says whether h is trustedBefore or one of its ancestors.
// The ancestors are listed once, when a commit the walk refuses could be
// one reached by another path than through trustedBefore itself (a merge
// of an old branch).
func (v *Verifier) belowTrusted(r *Repo, target, h plumbing.Hash) (bool, error) {
	if v.trustedBefore.IsZero() {
		return false, nil
	}
	if v.trusted == nil {
		if _, err := object.GetCommit(r.repo.Storer, v.trustedBefore); err != nil {
			return false, &VerifyError{Target: target, Commit: v.trustedBefore, Reason: VerifyUnreadable,
				Detail: "spec.git.verify.trustedBefore is not a commit of the repository"}
		}
		v.trusted = map[plumbing.Hash]struct{}{}
		queue := []plumbing.Hash{v.trustedBefore}
		for len(queue) > 0 && len(v.trusted) < 10*maxVerifiedCache {
			c := queue[0]
			queue = queue[1:]
			if _, ok := v.trusted[c]; ok {
				continue
			}
			v.trusted[c] = struct{}{}
			obj, err := object.GetCommit(r.repo.Storer, c)
			if err != nil {
				continue // the edge of a shallow clone
			}
			queue = append(queue, obj.ParentHashes...)
		}
	}
	_, ok := v.trusted[h]
	return ok, nil
}

// encodeCommit returns what encode writes: the commit object's bytes.
func encodeCommit(encode func(plumbing.EncodedObject) error) ([]byte, error) {
	obj := &plumbing.MemoryObject{}
	if err := encode(obj); err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
