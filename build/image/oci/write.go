// SPDX-License-Identifier: Apache-2.0

package oci

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Outputs are the paths Write fills in its directory.
type Outputs struct {
	// Tarball is what `docker save` writes, for `docker load -i`. It
	// keeps the config and layer but no manifest: pushed, it gets one
	// with Docker media types and so another digest.
	Tarball string
	// Layout is an OCI image layout holding the image, manifest and all,
	// under its tag (org.opencontainers.image.ref.name): `crane push
	// <dir>` and `skopeo copy oci:<dir>:<tag>` push the digest Build made.
	Layout string
}

// Write writes img, tagged ref, into dir as both a tarball and an OCI
// layout, replacing what an earlier Write left there.
func Write(img v1.Image, ref name.Tag, dir string) (Outputs, error) {
	out := Outputs{Tarball: filepath.Join(dir, "image.tar"), Layout: filepath.Join(dir, "oci")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Outputs{}, fmt.Errorf("image output: %w", err)
	}
	if err := tarball.WriteToFile(out.Tarball, ref, img); err != nil {
		return Outputs{}, fmt.Errorf("image tarball %s: %w", out.Tarball, err)
	}
	// A layout keeps every blob ever written to it, and a build writes a
	// new 20 MiB layer: start afresh so it holds this image only.
	if err := os.RemoveAll(out.Layout); err != nil {
		return Outputs{}, fmt.Errorf("image layout: %w", err)
	}
	p, err := layout.Write(out.Layout, empty.Index)
	if err != nil {
		return Outputs{}, fmt.Errorf("image layout %s: %w", out.Layout, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.TagStr()})); err != nil {
		return Outputs{}, fmt.Errorf("image layout %s: %w", out.Layout, err)
	}
	return out, nil
}
