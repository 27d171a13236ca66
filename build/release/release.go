// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// DefaultPlatforms are the binaries a release ships; the linux ones also
// make up the image.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// Options are what one release is made of.
type Options struct {
	Version   string
	Platforms []Platform
	// Source is the repository root; Out the directory to create.
	Source, Out string
	// Key is the cosign private key file and Password its password; an
	// empty Key makes a new pair next to Out.
	Key, Password string
	CACerts       string
	AllowDirty    bool
}

// Release is what Build wrote, for the summary and the tests.
type Release struct {
	Dir         string
	Version     string
	Revision    string
	CommitTime  time.Time
	Binaries    []Binary
	ImageDigest string
	// Chart is the packaged chart's file name.
	Chart string
	// PublicKey is the file that verifies the release; KeyMade says it
	// belongs to a key pair Build made rather than one it was given.
	PublicKey string
	KeyMade   bool

	caCertsSHA256 string
}

// Files in a release directory, by what they are. Binaries are named
// mcs-gitops-GOOS-GOARCH and their SBOMs the same with .cdx.json.
const (
	ChecksumsFile    = "checksums.txt"
	ChecksumsSigFile = "checksums.txt.sig"
	ProvenanceFile   = "mcs-gitops.intoto.jsonl"
	ImageSBOMFile    = "mcs-gitops-image.cdx.json"
	ImageDir         = "image"
	PublicKeyFile    = "cosign.pub"
)

// Build writes the release into o.Out, which must not exist: a release
// directory is never half old and half new. On failure it removes what it
// wrote.
func Build(ctx context.Context, o Options) (_ *Release, err error) {
	if len(o.Platforms) == 0 {
		return nil, errors.New("no platforms to build")
	}
	src, err := inspectSource(ctx, o.Source, o.AllowDirty)
	if err != nil {
		return nil, err
	}
	if err := checkChartVersion(o.Source, o.Version); err != nil {
		return nil, err
	}
	signer, pubPEM, made, err := loadOrMakeKey(o)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(o.Out); err == nil {
		return nil, fmt.Errorf("%s exists: a release goes into a new directory (remove it, or pass another --out)", o.Out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(o.Out)
		}
	}()

	r := &Release{Dir: o.Out, Version: o.Version, Revision: src.Revision, CommitTime: src.CommitTime, KeyMade: made}
	for _, p := range o.Platforms {
		b, err := buildBinary(ctx, o.Source, o.Out, o.Version, p)
		if err != nil {
			return nil, err
		}
		if err := writeBinarySBOM(&b, filepath.Join(o.Out, b.SBOM), o.Version, src); err != nil {
			return nil, err
		}
		r.Binaries = append(r.Binaries, b)
	}
	img, err := buildImage(r.Binaries, o.Version, o.CACerts, src)
	if err != nil {
		return nil, err
	}
	r.ImageDigest = img.Digest.String()
	r.caCertsSHA256 = img.CACertsSHA256
	if r.Chart, err = packageChart(ctx, o.Source, o.Out, o.Version, src.CommitTime); err != nil {
		return nil, err
	}
	imageSBOM, err := writeImageSBOM(img, r.Binaries, filepath.Join(o.Out, ImageSBOMFile), o.Version, src)
	if err != nil {
		return nil, err
	}
	statement, err := provenance(r, src, o)
	if err != nil {
		return nil, err
	}
	envelope, err := signStatement(ctx, signer, statement)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Out, ProvenanceFile), append(envelope, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := writeSignedImage(ctx, signer, img, imageSBOM, statement, filepath.Join(o.Out, ImageDir)); err != nil {
		return nil, err
	}
	sums, err := writeChecksums(o.Out, checksummed(r))
	if err != nil {
		return nil, err
	}
	if err := signBlob(ctx, signer, sums, filepath.Join(o.Out, ChecksumsSigFile)); err != nil {
		return nil, err
	}
	r.PublicKey = filepath.Join(o.Out, PublicKeyFile)
	if err := os.WriteFile(r.PublicKey, pubPEM, 0o644); err != nil {
		return nil, err
	}
	return r, nil
}

// checksummed are the files checksums.txt covers: every file that is the
// same bytes on every build of the commit. The signatures, the signed
// provenance and the key verify themselves; the image is addressed by its
// digest.
func checksummed(r *Release) []string {
	var files []string
	for _, b := range r.Binaries {
		files = append(files, b.Name, b.SBOM)
	}
	files = append(files, ImageSBOMFile, r.Chart)
	sort.Strings(files)
	return files
}

// Describe prints what was written and how to check it: the lines a
// releaser copies next.
func (r *Release) Describe(w io.Writer) {
	fmt.Fprintf(w, "release %s of %s (commit time %s) in %s\n", r.Version, r.Revision, r.CommitTime.UTC().Format(time.RFC3339), r.Dir)
	for _, b := range r.Binaries {
		fmt.Fprintf(w, "  %-28s %s/%s  %.1f MiB\n", b.Name, b.Platform.OS, b.Platform.Arch, float64(b.Size)/(1<<20))
	}
	fmt.Fprintf(w, "  %-28s %s (linux/amd64, linux/arm64), signed, with SBOM and provenance attestations\n", ImageDir+"/", r.ImageDigest)
	fmt.Fprintf(w, "  %-28s the Helm chart; %s/ holds it as an OCI artefact\n", r.Chart, ChartDir)
	fmt.Fprintf(w, "verify (docs/releasing.md):\n")
	fmt.Fprintf(w, "  cd %s && sha256sum -c %s\n", r.Dir, ChecksumsFile)
	fmt.Fprintf(w, "  cosign verify-blob --key %s --signature %s --insecure-ignore-tlog %s\n", PublicKeyFile, ChecksumsSigFile, ChecksumsFile)
	fmt.Fprintf(w, "  cosign verify --key %s --insecure-ignore-tlog --local-image %s\n", PublicKeyFile, ImageDir)
	fmt.Fprintf(w, "push the image with its signature and attestations:\n  cosign load --dir %s <registry>/mcs-gitops:%s\n", ImageDir, r.Version)
	if r.KeyMade {
		fmt.Fprintf(w, "signed with a key pair made for this run (%s): fine for trying a release, not for publishing one\n", filepath.Dir(r.Dir))
	}
}
