// SPDX-License-Identifier: Apache-2.0

package main

// SBOMs are CycloneDX, made by cyclonedx-gomod from each binary's own
// build information: the list of modules the Go linker recorded, so the
// SBOM names exactly what is linked in, at the version and checksum the
// build used, and nothing that go.mod merely requires. SPDX's Go tooling
// has no generator that reads a Go binary; CycloneDX's is maintained by
// the CycloneDX project itself, and cosign attests CycloneDX natively
// (`cosign verify-attestation --type cyclonedx`).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	genbin "github.com/CycloneDX/cyclonedx-gomod/pkg/generate/bin"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/licensedetect/local"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// sbomNamespace seeds the SBOMs' serial numbers: a UUID derived from the
// digest of what the SBOM describes, so the same artefact always gets the
// same serial and a rebuilt release the same bytes.
var sbomNamespace = uuid.MustParse("6f0c4c55-6d8f-4a0b-9a53-6d63732d6769")

// binaryBOM is the CycloneDX BOM of one built binary: its modules with
// the licences cyclonedx-gomod detects in their sources.
func binaryBOM(b Binary, version string, src Source) (*cdx.BOM, error) {
	gen, err := genbin.NewGenerator(b.Path,
		// The binary's module version is a pseudo-version of the
		// commit; the release's is the one users know it by.
		genbin.WithVersionOverride(version),
		genbin.WithLicenseDetector(local.NewDetector(zerolog.Nop())),
		genbin.WithLogger(zerolog.Nop()))
	if err != nil {
		return nil, fmt.Errorf("SBOM of %s: %w", b.Name, err)
	}
	bom, err := gen.Generate()
	if err != nil {
		return nil, fmt.Errorf("SBOM of %s: %w", b.Name, err)
	}
	sum, err := fileSHA256(b.Path)
	if err != nil {
		return nil, err
	}
	stamp(bom, sum, src.CommitTime)
	return bom, nil
}

// writeBinarySBOM writes b's SBOM to path and keeps it in b for the
// image's SBOM.
func writeBinarySBOM(b *Binary, path, version string, src Source) error {
	bom, err := binaryBOM(*b, version, src)
	if err != nil {
		return err
	}
	b.bom = bom
	return writeBOM(bom, path)
}

// writeImageSBOM describes the image: the container (by its index
// digest), the binary of each platform with the modules linked into it,
// and the CA bundle. It returns the BOM's bytes for the image's
// attestation.
func writeImageSBOM(img builtImage, bins []Binary, path, version string, src Source) ([]byte, error) {
	hexDigest := img.Digest.Hex
	container := cdx.Component{
		Type:       cdx.ComponentTypeContainer,
		Name:       "mcs-gitops",
		Version:    version,
		BOMRef:     "pkg:oci/mcs-gitops@" + url.PathEscape(img.Digest.String()),
		PackageURL: "pkg:oci/mcs-gitops@" + url.PathEscape(img.Digest.String()) + "?tag=" + url.QueryEscape(version),
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hexDigest}},
	}
	var components []cdx.Component
	var deps []cdx.Dependency
	seen := map[string]bool{}
	var containerDeps []string
	for _, b := range bins {
		if _, ok := img.Platforms[b.Platform]; !ok {
			continue
		}
		bom := b.bom
		// Each platform's binary is its own component: its purl,
		// which names GOOS and GOARCH, is its reference.
		app := *bom.Metadata.Component
		appRef := app.BOMRef
		app.BOMRef = app.PackageURL
		components = append(components, app)
		containerDeps = append(containerDeps, app.BOMRef)
		// A module is the same source on every platform: one
		// component, its purl without a platform.
		for _, c := range *bom.Components {
			if !seen[c.BOMRef] {
				seen[c.BOMRef] = true
				c.PackageURL = c.BOMRef
				components = append(components, c)
			}
		}
		for _, d := range *bom.Dependencies {
			if d.Ref == appRef {
				d.Ref = app.BOMRef
			} else if seen["dep:"+d.Ref] {
				continue
			}
			seen["dep:"+d.Ref] = true
			deps = append(deps, d)
		}
	}
	ca := cdx.Component{
		Type:   cdx.ComponentTypeFile,
		Name:   strings.TrimPrefix(caCertsInImage, "/"),
		BOMRef: "file:" + caCertsInImage,
		Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: img.CACertsSHA256}},
	}
	if pkg, ver := debianPackageOf(img.CACertsSource); pkg != "" {
		ca.PackageURL = "pkg:deb/debian/" + pkg + "@" + url.PathEscape(ver)
		ca.Version = ver
	}
	components = append(components, ca)
	containerDeps = append(containerDeps, ca.BOMRef)
	sort.Strings(containerDeps)
	deps = append([]cdx.Dependency{{Ref: container.BOMRef, Dependencies: &containerDeps}}, deps...)

	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Component: &container}
	bom.Components = &components
	bom.Dependencies = &deps
	stamp(bom, hexDigest, src.CommitTime)
	if err := writeBOM(bom, path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// stamp gives bom what a generator would take from the clock or a random
// source: the serial number from the described artefact's digest, the
// time from the commit.
func stamp(bom *cdx.BOM, digestHex string, commitTime time.Time) {
	bom.SerialNumber = "urn:uuid:" + uuid.NewSHA1(sbomNamespace, []byte(digestHex)).String()
	bom.Metadata.Timestamp = commitTime.UTC().Format(time.RFC3339)
	bom.Metadata.Tools = &cdx.ToolsChoice{Components: &[]cdx.Component{{
		Type: cdx.ComponentTypeApplication, Name: "cyclonedx-gomod", Group: "github.com/CycloneDX",
	}, {
		Type: cdx.ComponentTypeApplication, Name: "mcs-gitops build/release", Group: "github.com/mcs-gitops",
	}}}
}

func writeBOM(bom *cdx.BOM, path string) error {
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.Encode(bom); err != nil {
		return fmt.Errorf("SBOM %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// debianCABundle is where Debian's ca-certificates puts its bundle.
const debianCABundle = "/etc/ssl/certs/ca-certificates.crt"

// debianPackageOf names the Debian package that installed path, and its
// version, when dpkg knows it; empty otherwise (another distribution, a
// bundle passed by hand).
func debianPackageOf(path string) (pkg, version string) {
	if path == debianCABundle {
		// update-ca-certificates writes it from the package's
		// certificates, so no package owns the file itself.
		pkg = "ca-certificates"
	} else {
		out, err := exec.Command("dpkg-query", "-S", path).Output()
		if err != nil {
			return "", ""
		}
		p, _, ok := strings.Cut(strings.TrimSpace(string(out)), ":")
		if !ok || strings.Contains(p, ",") {
			return "", ""
		}
		pkg = p
	}
	v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return "", ""
	}
	return pkg, strings.TrimSpace(string(v))
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}
