// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Signer signs the commits Commit makes. Sign gets the commit object as
// git encodes it without a signature (what git verify-commit checks the
// signature against) and returns the armored signature, which goes into
// the commit's gpgsig header: git keeps SSH signatures there too.
type Signer interface {
	Sign(payload []byte, at time.Time) ([]byte, error)
	// Public is the public half of the key, so that Verify recognises
	// the loop's own commits.
	Public() *PublicKey
}

// sshNamespace is the namespace git signs commits in (ssh-keygen -Y sign
// -n git).
const sshNamespace = "git"

// sshSigner signs like git with gpg.format=ssh: ssh-keygen -Y sign -n git,
// sha512, armored as ssh-keygen armors.
type sshSigner struct {
	key ssh.Signer
	pub *PublicKey
}

// NewSSHSigner reads an OpenSSH or PEM private key, decrypting it with
// passphrase when it has one. Errors say what is wrong, never quote the
// key.
func NewSSHSigner(privateKey, passphrase []byte) (Signer, error) {
	var (
		key ssh.Signer
		err error
	)
	if len(passphrase) > 0 {
		key, err = ssh.ParsePrivateKeyWithPassphrase(privateKey, passphrase)
	} else {
		key, err = ssh.ParsePrivateKey(privateKey)
	}
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, fmt.Errorf("the key is passphrase-protected and no passphrase is configured")
		}
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, fmt.Errorf("the passphrase does not decrypt the key")
		}
		return nil, fmt.Errorf("not an OpenSSH or PEM private key")
	}
	return &sshSigner{key: key, pub: &PublicKey{ssh: key.PublicKey()}}, nil
}

func (s *sshSigner) Public() *PublicKey { return s.pub }

func (s *sshSigner) Sign(payload []byte, _ time.Time) ([]byte, error) {
	sig, err := sshsig.Sign(bytes.NewReader(payload), s.key, sshsig.HashSHA512, sshNamespace)
	if err != nil {
		return nil, fmt.Errorf("signing the commit: %w", err)
	}
	return armorSSH(sig.Marshal()), nil
}

// armorSSH armors an SSH signature the way ssh-keygen does (and so git
// stores it): base64 in lines of 70 characters.
func armorSSH(blob []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b strings.Builder
	b.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70])
		b.WriteByte('\n')
		enc = enc[70:]
	}
	b.WriteString(enc)
	b.WriteString("\n-----END SSH SIGNATURE-----\n")
	return []byte(b.String())
}

// openPGPSigner signs like git with gpg.format=openpgp: a binary detached
// signature, armored.
type openPGPSigner struct {
	entity *openpgp.Entity
	pub    *PublicKey
}

// NewOpenPGPSigner reads an armored OpenPGP private key (gpg --armor
// --export-secret-keys), decrypting it with passphrase when it is
// encrypted. The key block must hold one key that can sign.
func NewOpenPGPSigner(armoredPrivateKey, passphrase []byte) (Signer, error) {
	list, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(armoredPrivateKey))
	if err != nil {
		return nil, fmt.Errorf("not an armored OpenPGP private key")
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("holds %d OpenPGP keys; it must hold one", len(list))
	}
	e := list[0]
	if e.PrivateKey == nil {
		return nil, fmt.Errorf("is an OpenPGP public key; the private key is needed to sign")
	}
	if e.PrivateKey.Encrypted || anySubkeyEncrypted(e) {
		if len(passphrase) == 0 {
			return nil, fmt.Errorf("the key is passphrase-protected and no passphrase is configured")
		}
		if err := e.DecryptPrivateKeys(passphrase); err != nil {
			return nil, fmt.Errorf("the passphrase does not decrypt the key")
		}
	}
	if _, ok := e.SigningKey(time.Now()); !ok {
		return nil, fmt.Errorf("the OpenPGP key has no valid signing key (expired or revoked?)")
	}
	return &openPGPSigner{entity: e, pub: &PublicKey{pgp: openpgp.EntityList{e}}}, nil
}

func anySubkeyEncrypted(e *openpgp.Entity) bool {
	for _, s := range e.Subkeys {
		if s.PrivateKey != nil && s.PrivateKey.Encrypted {
			return true
		}
	}
	return false
}

func (s *openPGPSigner) Public() *PublicKey { return s.pub }

func (s *openPGPSigner) Sign(payload []byte, at time.Time) ([]byte, error) {
	// The signature is made at the commit's time, unless the key was
	// not valid then (a pinned clock, a key made after it).
	if _, ok := s.entity.SigningKey(at); !ok {
		at = time.Now()
	}
	var buf bytes.Buffer
	cfg := &packet.Config{Time: func() time.Time { return at }}
	if err := openpgp.ArmoredDetachSign(&buf, s.entity, bytes.NewReader(payload), cfg); err != nil {
		return nil, fmt.Errorf("signing the commit: %w", err)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// SignerFrom builds the commit signer of spec.git.signing, reading the
// key (and passphrase) through read; nil config gives a nil Signer.
// Errors name where the key lives, never its value.
func SignerFrom(s *v1alpha1.GitSigning, read func(*v1alpha1.CredentialSource) ([]byte, error)) (Signer, error) {
	if s == nil {
		return nil, nil
	}
	key, err := s.Key.Read(read, "spec.git.signing.key")
	if err != nil {
		return nil, err
	}
	var pass []byte
	if s.Passphrase != nil {
		if pass, err = s.Passphrase.Read(read, "spec.git.signing.passphrase"); err != nil {
			return nil, err
		}
		pass = bytes.TrimRight(pass, "\r\n")
	}
	var signer Signer
	switch s.Format {
	case v1alpha1.SigningSSH:
		signer, err = NewSSHSigner(key, pass)
	case v1alpha1.SigningOpenPGP:
		signer, err = NewOpenPGPSigner(key, pass)
	default:
		return nil, fmt.Errorf("spec.git.signing.format %q is not ssh or openpgp", s.Format)
	}
	if err != nil {
		return nil, fmt.Errorf("spec.git.signing.key from %s: %w", s.Key.Describe(), err)
	}
	return signer, nil
}
