// SPDX-License-Identifier: Apache-2.0

package main

// Signing is cosign's, as a library: its key format, its blob signature
// (base64 ECDSA over the file, what `cosign sign-blob` writes), its image
// signature (a simple-signing payload for the index digest, stored the
// way `cosign save` stores it in an OCI layout) and its attestations
// (in-toto statements in DSSE envelopes). So `cosign verify-blob`,
// `cosign verify --local-image`, `cosign verify-attestation` and, once
// pushed with `cosign load`, `cosign verify <image>` check them as they
// check anything cosign signed.
//
// Nothing is written to the Rekor transparency log or timestamped: both
// are public Sigstore services this build cannot reach. Verifiers pass
// --insecure-ignore-tlog, which docs/releasing.md explains.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/cosign/attestation"
	"github.com/sigstore/cosign/v2/pkg/oci/layout"
	ocimutate "github.com/sigstore/cosign/v2/pkg/oci/mutate"
	"github.com/sigstore/cosign/v2/pkg/oci/signed"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	signatureoptions "github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// ImageIdentity is the docker-reference the image signature claims. A
// release is pushed wherever its user keeps images, so the signature
// binds the digest, which survives the push, and not a registry.
const ImageIdentity = "mcs-gitops"

// loadOrMakeKey reads the cosign private key o.Key, or, when there is
// none, the local pair next to o.Out, made on first use. It returns the
// signer and the public key's PEM.
func loadOrMakeKey(o Options) (signature.SignerVerifier, []byte, bool, error) {
	path, made := o.Key, false
	if path == "" {
		path, made = filepath.Join(filepath.Dir(filepath.Clean(o.Out)), "cosign.key"), true
		if err := makeKeyPair(path, o.Password); err != nil {
			return nil, nil, false, err
		}
	}
	priv, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, false, fmt.Errorf("signing key: %w", err)
	}
	sv, err := cosign.LoadPrivateKey(priv, []byte(o.Password), nil)
	if err != nil {
		// Never the password: only that it, or the file, is wrong.
		return nil, nil, false, fmt.Errorf("signing key %s: %w (is COSIGN_PASSWORD its password?)", path, err)
	}
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, nil, false, fmt.Errorf("signing key %s: %w", path, err)
	}
	pem, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return nil, nil, false, fmt.Errorf("signing key %s: %w", path, err)
	}
	return sv, pem, made, nil
}

// makeKeyPair writes a cosign key pair at path (and path's .pub) unless
// the private key is there already.
func makeKeyPair(path, password string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("signing key: %w", err)
	}
	keys, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return []byte(password), nil })
	if err != nil {
		return fmt.Errorf("make a signing key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, keys.PrivateBytes, 0o600); err != nil {
		return err
	}
	return os.WriteFile(strings.TrimSuffix(path, ".key")+".pub", keys.PublicBytes, 0o644)
}

// signBlob writes what `cosign sign-blob --output-signature` writes: the
// base64 signature of the file's bytes.
func signBlob(ctx context.Context, s signature.Signer, blob []byte, sigPath string) error {
	sig, err := s.SignMessage(bytes.NewReader(blob), signatureoptions.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("sign %s: %w", filepath.Base(sigPath), err)
	}
	return os.WriteFile(sigPath, []byte(base64.StdEncoding.EncodeToString(sig)), 0o644)
}

// signStatement wraps an in-toto statement in a DSSE envelope signed with
// s, what `cosign attest-blob` writes and `cosign verify-blob-attestation`
// reads.
func signStatement(ctx context.Context, s signature.Signer, statement []byte) ([]byte, error) {
	env, err := dsse.WrapSigner(s, types.IntotoPayloadType).SignMessage(bytes.NewReader(statement), signatureoptions.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("sign provenance: %w", err)
	}
	return env, nil
}

// writeSignedImage writes the index into dir as an OCI layout together
// with its signature and two attestations, the image SBOM (CycloneDX)
// and the provenance (SLSA v1), as `cosign save` would after `cosign
// sign` and `cosign attest`.
func writeSignedImage(ctx context.Context, s signature.Signer, img builtImage, sbom, provenance []byte, dir string) error {
	ref, err := name.NewDigest(ImageIdentity + "@" + img.Digest.String())
	if err != nil {
		return fmt.Errorf("image reference: %w", err)
	}
	si := signed.ImageIndex(img.Index)

	pl, err := payload.Cosign{Image: ref, ClaimedIdentity: ImageIdentity}.MarshalJSON()
	if err != nil {
		return fmt.Errorf("image signature payload: %w", err)
	}
	raw, err := s.SignMessage(bytes.NewReader(pl), signatureoptions.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("sign image: %w", err)
	}
	sig, err := static.NewSignature(pl, base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		return fmt.Errorf("image signature: %w", err)
	}
	if si, err = ocimutate.AttachSignatureToImageIndex(si, sig); err != nil {
		return fmt.Errorf("image signature: %w", err)
	}

	sbomStatement, err := attestation.GenerateStatement(attestation.GenerateOpts{
		Predicate: bytes.NewReader(sbom), Type: "cyclonedx", Digest: img.Digest.Hex, Repo: ImageIdentity,
	})
	if err != nil {
		return fmt.Errorf("image SBOM statement: %w", err)
	}
	sbomJSON, err := jsonOf(sbomStatement)
	if err != nil {
		return err
	}
	for _, a := range []struct {
		statement     []byte
		predicateType string
	}{
		{sbomJSON, "https://cyclonedx.org/bom"},
		{provenance, slsaProvenanceV1},
	} {
		env, err := signStatement(ctx, s, a.statement)
		if err != nil {
			return err
		}
		att, err := static.NewAttestation(env,
			static.WithLayerMediaType(types.DssePayloadType),
			static.WithAnnotations(map[string]string{"predicateType": a.predicateType}))
		if err != nil {
			return fmt.Errorf("image attestation %s: %w", a.predicateType, err)
		}
		if si, err = ocimutate.AttachAttestationToImageIndex(si, att); err != nil {
			return fmt.Errorf("image attestation %s: %w", a.predicateType, err)
		}
	}
	if err := layout.WriteSignedImageIndex(dir, si); err != nil {
		return fmt.Errorf("image layout %s: %w", dir, err)
	}
	return nil
}
