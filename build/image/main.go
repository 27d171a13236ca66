// SPDX-License-Identifier: Apache-2.0

// Command image builds mcs-gitops's container image from a built binary
// without a container engine (see package oci) and writes it under --out
// as a tarball and an OCI layout. `make image` builds the binary and runs
// it; SOURCE_DATE_EPOCH, when set, dates the image instead of the commit.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/mcs-gitops/mcs-gitops/build/image/oci"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run() error {
	var in oci.Inputs
	var image, out string
	flag.StringVar(&in.Binary, "binary", "", "static Linux build of cmd/mcs-gitops (CGO_ENABLED=0)")
	flag.StringVar(&in.CACerts, "ca-certs", oci.CACertsPath, "PEM bundle of the CAs to trust (Debian package ca-certificates)")
	flag.StringVar(&in.Version, "version", "", "the version the binary was built with (-X buildinfo.version)")
	flag.StringVar(&image, "image", "", "name:tag in the tarball (default mcs-gitops:<version>)")
	flag.StringVar(&out, "out", "", "directory to write image.tar and oci/ into")
	flag.Parse()
	if in.Binary == "" || in.Version == "" || out == "" || flag.NArg() > 0 {
		flag.Usage()
		return fmt.Errorf("--binary, --version and --out are required, and nothing else")
	}
	if image == "" {
		image = "mcs-gitops:" + in.Version
	}
	// Without a tag, a name means :latest, which a kubelet pulls again on
	// every start: refuse the surprise.
	ref, err := name.NewTag(image)
	if err != nil {
		return fmt.Errorf("--image %q: %w", image, err)
	}
	if !strings.HasSuffix(image, ":"+ref.TagStr()) {
		return fmt.Errorf("--image %q has no tag: want name:tag", image)
	}
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		s, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970: %w", epoch, err)
		}
		in.Created = time.Unix(s, 0)
	}

	img, err := oci.Build(in)
	if err != nil {
		return err
	}
	o, err := oci.Write(img, ref, out)
	if err != nil {
		return err
	}
	return describe(img, image, ref, o)
}

// describe says what was built and where it went, and how to get it to a
// cluster: the lines a person copies next.
func describe(img v1.Image, image string, ref name.Tag, o oci.Outputs) error {
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("image digest: %w", err)
	}
	id, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("image config digest: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("image config: %w", err)
	}
	size, err := compressedSize(img)
	if err != nil {
		return err
	}
	// A name without a registry is pushed to one the user picks.
	target := image
	if !strings.Contains(image, "/") {
		target = "<registry>/" + image
	}
	fmt.Printf("image %s (%s/%s, %.1f MiB compressed)\n", image, cf.OS, cf.Architecture, float64(size)/(1<<20))
	fmt.Printf("  digest %s (kept by crane push and skopeo copy of the OCI layout)\n", digest)
	fmt.Printf("  id     %s (what docker images shows)\n", id)
	fmt.Printf("  OCI layout %s\n", o.Layout)
	fmt.Printf("      crane push %s %s\n", o.Layout, target)
	fmt.Printf("      skopeo copy oci:%s:%s docker://%s\n", o.Layout, ref.TagStr(), target)
	fmt.Printf("  tarball    %s\n", o.Tarball)
	fmt.Printf("      docker load -i %s\n", o.Tarball)
	fmt.Printf("then, in deploy/controller and deploy/cronjob:\n      kustomize edit set image mcs-gitops=%s\n", target)
	return nil
}

// compressedSize is what a registry stores and a node pulls.
func compressedSize(img v1.Image) (int64, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, fmt.Errorf("image layers: %w", err)
	}
	var n int64
	for _, l := range layers {
		s, err := l.Size()
		if err != nil {
			return 0, fmt.Errorf("image layer size: %w", err)
		}
		n += s
	}
	return n, nil
}
