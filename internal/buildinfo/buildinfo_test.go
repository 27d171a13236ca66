// SPDX-License-Identifier: Apache-2.0

package buildinfo

import (
	"bytes"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A build from a checkout: what `go build -buildvcs=true` records.
func checkoutBuild() *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/mcs-gitops/mcs-gitops/cmd/mcs-gitops",
		Main:      debug.Module{Path: "github.com/mcs-gitops/mcs-gitops", Version: "v0.0.0-20260101120000-0123456789ab+dirty"},
		Deps: []*debug.Module{
			{Path: "k8s.io/client-go", Version: "v0.37.2"},
			{Path: "sigs.k8s.io/mcs-api", Version: "v0.5.2"},
			{Path: "sigs.k8s.io/gateway-api", Version: "v1.6.3", Replace: &debug.Module{Path: "example.test/gateway-api", Version: "v1.6.4-fork"}},
			{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
		},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "0"},
			{Key: "GOARCH", Value: "arm64"},
			{Key: "GOOS", Value: "linux"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-01T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
}

func TestFromReadsWhatTheToolchainRecorded(t *testing.T) {
	i := From(checkoutBuild())
	assert.Equal(t, Info{
		Version:    "v0.0.0-20260101120000-0123456789ab+dirty",
		Revision:   "0123456789abcdef0123456789abcdef01234567",
		Modified:   true,
		CommitTime: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
		GoVersion:  "go1.26.8",
		Platform:   "linux/arm64",
		// A replaced module reports what was built; one not linked (Flux
		// ssa here) is absent, not a guess; one not listed is ignored.
		Modules: map[string]string{"k8s.io/client-go": "v0.37.2", "sigs.k8s.io/mcs-api": "v0.5.2", "sigs.k8s.io/gateway-api": "v1.6.4-fork"},
	}, i)
}

// go test and a plain go build in a checkout record no version and no
// revision: the version says so instead of being empty.
func TestFromWithoutVersionOrVCS(t *testing.T) {
	i := From(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcs-gitops/mcs-gitops", Version: "(devel)"}})
	assert.Equal(t, Info{Version: Devel, GoVersion: "go1.26.8", Modules: map[string]string{}}, i)
	assert.Equal(t, Devel, From(&debug.BuildInfo{}).Version)
}

// The -X version is what a release says it is, whatever the module
// version; without it, the running binary's own build information speaks.
func TestReadPrefersTheLinkerVersion(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	require.True(t, ok)
	assert.Equal(t, From(bi), Read())

	version = "v1.2.3"
	t.Cleanup(func() { version = "" })
	i := Read()
	assert.Equal(t, "v1.2.3", i.Version)
	assert.Equal(t, bi.GoVersion, i.GoVersion)
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, From(checkoutBuild()).WriteText(&b))
	assert.Equal(t, `version:                 v0.0.0-20260101120000-0123456789ab+dirty
revision:                0123456789abcdef0123456789abcdef01234567 (modified)
commit time:             2026-01-01T12:00:00Z
go:                      go1.26.8
platform:                linux/arm64
sigs.k8s.io/mcs-api:     v0.5.2
sigs.k8s.io/gateway-api: v1.6.4-fork
k8s.io/client-go:        v0.37.2
`, b.String())

	b.Reset()
	require.NoError(t, Info{Version: Devel, GoVersion: "go1.26.8"}.WriteText(&b))
	assert.Equal(t, "version:  (devel)\nrevision: unknown\ngo:       go1.26.8\n", b.String())
}
