// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// MainPackage is what a release builds.
const MainPackage = "github.com/mcs-gitops/mcs-gitops/cmd/mcs-gitops"

// Platform is one GOOS/GOARCH pair.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatforms reads "linux/amd64,darwin/arm64".
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	seen := map[Platform]bool{}
	for _, f := range strings.Split(s, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		p := Platform{os, arch}
		if !ok || os == "" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("--platforms: %q is not GOOS/GOARCH", f)
		}
		if seen[p] {
			return nil, fmt.Errorf("--platforms: %s twice", p)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// Binary is one built binary in the release directory.
type Binary struct {
	Platform Platform
	// Name and SBOM are file names in the release directory.
	Name, SBOM string
	Path       string
	Size       int64
	// bom is the binary's SBOM as written, which the image's SBOM
	// reuses rather than generating (and detecting licences) again.
	bom *cdx.BOM
}

// Source is the checkout a release is built from.
type Source struct {
	Root       string
	Revision   string
	CommitTime time.Time
	Dirty      bool
	// GoVersion is the toolchain that builds the binaries (go env GOVERSION).
	GoVersion string
}

// inspectSource reads the commit to release and refuses a tree whose
// binaries would not be that commit.
func inspectSource(ctx context.Context, root string, allowDirty bool) (Source, error) {
	s := Source{Root: root}
	rev, err := command(ctx, root, nil, "git", "rev-parse", "HEAD")
	if err != nil {
		return s, fmt.Errorf("source %s: not a Git checkout? %w", root, err)
	}
	s.Revision = rev
	ct, err := command(ctx, root, nil, "git", "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return s, fmt.Errorf("source %s: %w", root, err)
	}
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return s, fmt.Errorf("source %s: commit time %q: %w", root, ct, err)
	}
	s.CommitTime = time.Unix(secs, 0).UTC()
	status, err := command(ctx, root, nil, "git", "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return s, fmt.Errorf("source %s: %w", root, err)
	}
	s.Dirty = status != ""
	if s.Dirty && !allowDirty {
		return s, fmt.Errorf("source %s has uncommitted changes; a release is built from a commit (commit or stash them; --allow-dirty only to try a release out):\n%s", root, status)
	}
	if s.GoVersion, err = command(ctx, root, nil, "go", "env", "GOVERSION"); err != nil {
		return s, err
	}
	return s, nil
}

// buildBinary builds MainPackage for p into dir. What makes it the same
// bytes on any machine with the same toolchain: no cgo, -trimpath (no
// paths of this machine), the version by -X, and -buildvcs recording the
// commit and its time rather than anything of the build's own. The Go
// toolchain records no build time.
func buildBinary(ctx context.Context, root, dir, version string, p Platform) (Binary, error) {
	name := "mcs-gitops-" + p.OS + "-" + p.Arch
	b := Binary{Platform: p, Name: name, SBOM: name + ".cdx.json", Path: filepath.Join(dir, name)}
	abs, err := filepath.Abs(b.Path)
	if err != nil {
		return b, err
	}
	env := []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Arch, "GOFLAGS=", "GOEXPERIMENT=", "GOAMD64=", "GOARM64="}
	if _, err := command(ctx, root, env, "go", "build", "-trimpath", "-buildvcs=true",
		"-ldflags", "-s -w -X github.com/mcs-gitops/mcs-gitops/internal/buildinfo.version="+version,
		"-o", abs, "./cmd/mcs-gitops"); err != nil {
		return b, fmt.Errorf("build %s: %w", p, err)
	}
	fi, err := os.Stat(b.Path)
	if err != nil {
		return b, err
	}
	b.Size = fi.Size()
	return b, nil
}

// command runs name in dir with env added to this process's, and returns
// its trimmed standard output; its standard error goes into the error.
func command(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}
