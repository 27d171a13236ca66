// SPDX-License-Identifier: Apache-2.0

// Command release writes a release of mcs-gitops into one directory:
// static binaries for each platform, a CycloneDX SBOM per binary and one
// for the image, a multi-arch OCI image (an OCI layout holding the index,
// its cosign signature and its attestations), a SLSA provenance statement
// signed as a DSSE envelope, the Helm chart (packaged, and as an OCI
// artefact), checksums.txt and its cosign signature, and the public key
// that verifies them. `make release VERSION=vX.Y.Z` runs it
// from the repository root; docs/releasing.md lists what it writes and the
// commands that verify it.
//
// It is its own module so that cosign, the SBOM generator and what they
// pull in never enter the product's go.mod: the binaries are built by the
// go command in the repository root, from its go.mod alone.
//
// Everything but the signatures is the same bytes every time for the same
// commit and toolchain: times are the commit's, the SBOMs' serial numbers
// are derived from what they describe, and nothing reads the clock.
// ECDSA signatures are randomised by design, so they differ.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"golang.org/x/mod/semver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	var o Options
	var platforms, out string
	fs.StringVar(&o.Version, "version", "", "the release's version, vMAJOR.MINOR.PATCH[-PRE] (required)")
	fs.StringVar(&out, "out", "", "directory to write the release into; it must not exist yet (default _output/release/VERSION)")
	fs.StringVar(&platforms, "platforms", strings.Join(DefaultPlatforms, ","), "GOOS/GOARCH pairs to build binaries for; the image holds the linux ones")
	fs.StringVar(&o.Key, "key", "", "cosign private key (cosign generate-key-pair) to sign with; its password is read from COSIGN_PASSWORD. Empty: a new key pair is made in the output directory's parent and its public half is the one the release ships (a local release, not the project's)")
	fs.StringVar(&o.Source, "source", ".", "the repository to build: its root, a clean Git checkout at the commit to release")
	fs.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of the CAs the image trusts (Debian package ca-certificates)")
	fs.BoolVar(&o.AllowDirty, "allow-dirty", false, "build from a tree with uncommitted changes (the binaries then say vcs.modified=true); for trying the release out, never for publishing one")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: release --version vX.Y.Z [--key cosign.key] [--out DIR] [--platforms ...]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if !semver.IsValid(o.Version) || semver.Canonical(o.Version) != strings.SplitN(o.Version, "+", 2)[0] {
		return fmt.Errorf("--version %q: want vMAJOR.MINOR.PATCH, optionally -PRERELEASE (docs/releasing.md)", o.Version)
	}
	ps, err := ParsePlatforms(platforms)
	if err != nil {
		return err
	}
	o.Platforms = ps
	if out == "" {
		out = filepath.Join(o.Source, "_output", "release", o.Version)
	}
	o.Out = out
	o.Password = os.Getenv("COSIGN_PASSWORD")

	r, err := Build(ctx, o)
	if err != nil {
		return err
	}
	r.Describe(os.Stdout)
	return nil
}
