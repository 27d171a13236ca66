// SPDX-License-Identifier: Apache-2.0

// Package oci assembles mcs-gitops's container image from a built binary,
// without a container engine and without a base image: one layer holding
// the static binary, a CA bundle, /etc/passwd and /etc/group entries for
// the non-root user 65532 and the directories deploy mounts volumes on,
// and a config that runs the binary as that user, labelled with the
// version and the revision the binary itself records. It also writes the
// image out (Write) as a tarball that `docker load` and `crane push` take
// and as an OCI layout for skopeo.
//
// The same binary and inputs give the same digest: every time in the image
// is the commit time (or SOURCE_DATE_EPOCH), never the clock; entries are
// sorted and their owners and modes fixed.
package oci

import (
	"crypto/x509"
	"debug/buildinfo"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	info "github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
)

const (
	// User is the numeric user and group the image runs as: the manifests
	// in deploy/ say runAsNonRoot, which a kubelet can only verify for a
	// numeric user. 65532 is the "nonroot" of distroless images.
	User = 65532
	// Entrypoint is where the binary lives in the image.
	Entrypoint = "/mcs-gitops"
	// Workdir is where deploy mounts the clone's volume; also the user's
	// home, so whatever looks for $HOME finds a writable place there.
	Workdir = "/var/lib/mcs-gitops"
	// CACertsPath is where the bundle goes: the first place Go's
	// crypto/x509 looks on Linux, so no SSL_CERT_FILE is needed.
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"

	mainPackage = "github.com/mcs-gitops/mcs-gitops/cmd/mcs-gitops"
)

// Inputs are everything the image is made of; nothing else (no clock, no
// environment) goes into it.
type Inputs struct {
	// Binary is a static Linux build of cmd/mcs-gitops.
	Binary string
	// CACerts is a PEM bundle of the CAs the binary trusts for Git and the
	// members' APIs (on Debian, /etc/ssl/certs/ca-certificates.crt of the
	// package ca-certificates).
	CACerts string
	// Version is what the binary was built with (-X buildinfo.version),
	// which is not in its build information; it labels the image.
	Version string
	// Created dates the image and its files; zero means the commit time
	// the binary records.
	Created time.Time
}

// Build assembles the image. The labels' revision, the source and the
// platform come from the binary's build information, so they cannot
// disagree with what `mcs-gitops version` prints inside the image.
func Build(in Inputs) (v1.Image, error) {
	if in.Version == "" {
		return nil, fmt.Errorf("no version: pass the one the binary was built with")
	}
	bi, err := buildinfo.ReadFile(in.Binary)
	if err != nil {
		return nil, fmt.Errorf("binary %s: %w", in.Binary, err)
	}
	goarch, err := checkBinary(bi)
	if err != nil {
		return nil, fmt.Errorf("binary %s: %w", in.Binary, err)
	}
	build := info.From(bi)
	created, err := createdAt(in.Created, build)
	if err != nil {
		return nil, fmt.Errorf("binary %s: %w", in.Binary, err)
	}
	binary, err := os.ReadFile(in.Binary)
	if err != nil {
		return nil, fmt.Errorf("binary: %w", err)
	}
	certs, err := readCACerts(in.CACerts)
	if err != nil {
		return nil, err
	}
	layer, err := newLayer(rootFS(binary, certs), created)
	if err != nil {
		return nil, err
	}

	labels := map[string]string{
		"org.opencontainers.image.title":       "mcs-gitops",
		"org.opencontainers.image.description": "Multi-Cluster Services (KEP-1645) as GitOps",
		"org.opencontainers.image.source":      "https://" + bi.Main.Path,
		"org.opencontainers.image.version":     in.Version,
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
	}
	if build.Revision != "" {
		labels["org.opencontainers.image.revision"] = build.Revision
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: goarch,
		OS:           "linux",
		Created:      v1.Time{Time: created},
		// mutate fills in the layers' diff IDs but not the type, which
		// the spec requires and docker load checks.
		RootFS: v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", User, User),
			Entrypoint: []string{Entrypoint},
			WorkingDir: Workdir,
			Labels:     labels,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "build/image " + in.Version},
	})
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	return img, nil
}

// checkBinary refuses what would not start in an image without a libc or
// on the platform it is labelled for, and returns the binary's GOARCH.
func checkBinary(bi *debug.BuildInfo) (string, error) {
	if bi.Path != mainPackage {
		return "", fmt.Errorf("is %q, not a build of %s", bi.Path, mainPackage)
	}
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	if s["GOOS"] != "linux" {
		return "", fmt.Errorf("built for GOOS=%q; the image needs GOOS=linux", s["GOOS"])
	}
	if s["CGO_ENABLED"] != "0" {
		return "", fmt.Errorf("built with cgo, which needs a libc the image does not have: build with CGO_ENABLED=0")
	}
	if s["GOARCH"] == "" {
		return "", fmt.Errorf("records no GOARCH")
	}
	return s["GOARCH"], nil
}

// createdAt is the image's one time: the caller's (SOURCE_DATE_EPOCH),
// else the binary's commit time. Without either it fails rather than date
// the image by the clock, which would change its digest every build.
func createdAt(created time.Time, build info.Info) (time.Time, error) {
	if created.IsZero() {
		created = build.CommitTime
	}
	if created.IsZero() {
		return time.Time{}, fmt.Errorf("records no commit time (built outside a Git checkout, or with -buildvcs=false): set SOURCE_DATE_EPOCH")
	}
	// Tar headers and the config keep whole seconds in UTC; so does the
	// label, so all three agree.
	return created.UTC().Truncate(time.Second), nil
}

// readCACerts reads the bundle and makes sure it holds certificates: an
// empty or truncated file would make every TLS connection fail only once
// the image runs.
func readCACerts(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w (on Debian: apt-get install ca-certificates, or pass another PEM bundle)", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA certificates %s: no PEM certificate in it", path)
	}
	return b, nil
}
