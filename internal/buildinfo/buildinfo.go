// SPDX-License-Identifier: Apache-2.0

// Package buildinfo says which build of mcs-gitops is running: its version,
// the Git revision it was built from (and whether that tree was modified),
// the Go version and the versions of the libraries whose behaviour users
// see. Everything but the version comes from the build information the Go
// toolchain records in every binary, so it cannot drift from what was
// linked; the version is the one variable a release build sets with
// -ldflags -X. It serves `mcs-gitops version`, the build-info metric and the
// image build, which reads it from the binary it packages.
package buildinfo

import (
	"runtime/debug"
	"time"
)

// version is set by release and image builds:
//
//	-ldflags "-X github.com/mcs-gitops/mcs-gitops/internal/buildinfo.version=v1.2.3"
//
// It wins over the module version because a build from a checkout has none
// worth showing (a pseudo-version at best).
var version string

// Devel is the version of a build that has none: neither -X nor a module
// version (a plain `go build` in a checkout, or `go test`).
const Devel = "(devel)"

// Libraries are the modules whose versions a bug report needs, in the order
// they are printed: the MCS API the CRDs and types come from, Gateway API
// for gateway mode, the Kubernetes client, and Flux's server-side apply.
var Libraries = []string{
	"sigs.k8s.io/mcs-api",
	"sigs.k8s.io/gateway-api",
	"k8s.io/client-go",
	"github.com/fluxcd/pkg/ssa",
}

// Info describes one build.
type Info struct {
	Version string `json:"version"`
	// Revision is the Git commit, empty when the build recorded none (go
	// test, -buildvcs=false, a build outside a checkout).
	Revision string `json:"revision,omitempty"`
	// Modified says the tree had changes Revision does not hold.
	Modified bool `json:"modified,omitempty"`
	// CommitTime is Revision's commit time; zero when unknown.
	CommitTime time.Time `json:"commitTime,omitzero"`
	GoVersion  string    `json:"goVersion"`
	// Platform is GOOS/GOARCH of the binary, empty when not recorded.
	Platform string `json:"platform,omitempty"`
	// Modules maps each of Libraries linked into the binary to its version
	// (that of its replacement, when replaced); one not linked is absent.
	Modules map[string]string `json:"modules"`
}

// Read describes the running binary, with the -X version when one was set.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		// Only a binary built without module support has none.
		bi = &debug.BuildInfo{}
	}
	i := From(bi)
	if version != "" {
		i.Version = version
	}
	return i
}

// From describes the build bi records: the running binary's
// (debug.ReadBuildInfo) or another's (debug/buildinfo.ReadFile). The
// version is the main module's, else Devel; a -X version is not in bi.
func From(bi *debug.BuildInfo) Info {
	i := Info{Version: Devel, GoVersion: bi.GoVersion, Modules: map[string]string{}}
	if v := bi.Main.Version; v != "" {
		i.Version = v
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		case "vcs.time":
			// RFC 3339 is what the go command writes; anything else is
			// left out rather than guessed.
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				i.CommitTime = t
			}
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		i.Platform = goos + "/" + goarch
	}
	for _, d := range bi.Deps {
		for _, l := range Libraries {
			if d.Path != l {
				continue
			}
			if d.Replace != nil {
				d = d.Replace
			}
			i.Modules[l] = d.Version
		}
	}
	return i
}
