// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/mcs-gitops/mcs-gitops/build/image/oci"
)

const caCertsInImage = oci.CACertsPath

// builtImage is the multi-arch image: an OCI index of one image per
// linux binary, each built exactly as `make image` builds one.
type builtImage struct {
	Index  v1.ImageIndex
	Digest v1.Hash
	// Platforms maps each platform in the index to its image's digest.
	Platforms map[Platform]v1.Hash
	// CACertsSource is the bundle's path on the build machine and
	// CACertsSHA256 its digest, for the SBOM.
	CACertsSource, CACertsSHA256 string
}

func buildImage(bins []Binary, version, caCerts string, src Source) (builtImage, error) {
	out := builtImage{Platforms: map[Platform]v1.Hash{}, CACertsSource: caCerts}
	certs, err := os.ReadFile(caCerts)
	if err != nil {
		return out, fmt.Errorf("image: CA certificates: %w", err)
	}
	sum := sha256.Sum256(certs)
	out.CACertsSHA256 = hex.EncodeToString(sum[:])

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range bins {
		if b.Platform.OS != "linux" {
			continue
		}
		img, err := oci.Build(oci.Inputs{Binary: b.Path, CACerts: caCerts, Version: version, Created: src.CommitTime})
		if err != nil {
			return out, fmt.Errorf("image for %s: %w", b.Platform, err)
		}
		d, err := img.Digest()
		if err != nil {
			return out, fmt.Errorf("image for %s: %w", b.Platform, err)
		}
		out.Platforms[b.Platform] = d
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: b.Platform.OS, Architecture: b.Platform.Arch}},
		})
	}
	if len(out.Platforms) == 0 {
		return out, fmt.Errorf("image: no linux platform among the binaries; the image needs at least one")
	}
	annotated, ok := mutate.Annotations(idx, map[string]string{
		"org.opencontainers.image.title":    "mcs-gitops",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": src.Revision,
		"org.opencontainers.image.created":  src.CommitTime.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":   "https://github.com/mcs-gitops/mcs-gitops",
	}).(v1.ImageIndex)
	if !ok {
		return out, fmt.Errorf("image: annotating the index did not give an index")
	}
	out.Index = annotated
	if out.Digest, err = annotated.Digest(); err != nil {
		return out, fmt.Errorf("image index digest: %w", err)
	}
	return out, nil
}
