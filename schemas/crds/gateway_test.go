// SPDX-License-Identifier: Apache-2.0

package crds

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	// The Go types render will build routes with; importing them here also
	// keeps the module, and so the CRDs' source, pinned in go.mod.
	_ "sigs.k8s.io/gateway-api/apis/v1"
)

// The embedded copies must be byte-identical to the module in go.mod:
// after a bump, `go generate ./schemas/...` refreshes them.
func TestGatewayAPICRDsMatchTheModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", GatewayAPIModule).Output()
	require.NoError(t, err)
	var mod struct{ Dir, Version string }
	require.NoError(t, json.Unmarshal(out, &mod))
	require.NotEmpty(t, mod.Dir, "module not downloaded")
	for _, f := range append(append([]string(nil), GatewayAPIFiles...), ImplementationFiles...) {
		want, err := os.ReadFile(filepath.Join(mod.Dir, GatewayAPIChannelDir, f))
		require.NoError(t, err)
		got, err := gatewayAPI.ReadFile("gatewayapi/" + f)
		require.NoError(t, err, "%s is not embedded: add it to the go:generate line in gateway.go", f)
		assert.True(t, string(want) == string(got), "%s differs from %s %s: run go generate ./schemas/...", f, GatewayAPIModule, mod.Version)
	}
}

func TestGatewayAPIServesTheRouteKinds(t *testing.T) {
	got, err := GatewayAPI()
	require.NoError(t, err)
	kinds := map[string][]string{}
	for _, crd := range got {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				kinds[crd.Spec.Names.Kind] = append(kinds[crd.Spec.Names.Kind], v.Name)
			}
		}
	}
	assert.Contains(t, kinds["HTTPRoute"], "v1")
	assert.Contains(t, kinds["TCPRoute"], "v1alpha2")
	assert.Contains(t, kinds["Gateway"], "v1")
	assert.Contains(t, kinds["ListenerSet"], "v1", "one ListenerSet per exported service with TCP ports")
	assert.Len(t, got, len(GatewayAPIFiles))
}
