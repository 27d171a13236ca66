// SPDX-License-Identifier: Apache-2.0

package rerender

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

var now = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)

func name(p string) string { return "abc123:" + p }

// demo is the demo ClusterSet's files as a commit holds them (one file
// per member's snapshot, as before the split, which reads the same).
func demo(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, p := range []string{layout.ConfigFile, "inputs/cluster-1.yaml", "inputs/cluster-2.yaml", "inputs/cluster-3.yaml"} {
		b, err := os.ReadFile("../../fixtures/demo/" + p)
		require.NoError(t, err)
		files[p] = b
	}
	return files
}

// A commit renders again to what render renders from the same files; a
// second time, to the same bytes.
func TestRenderIsDeterministic(t *testing.T) {
	w, err := Load(demo(t), name, now)
	require.NoError(t, err)
	require.NoError(t, w.Render())
	require.NotEmpty(t, w.Files)
	again, err := Load(demo(t), name, now)
	require.NoError(t, err)
	require.NoError(t, again.Render())
	assert.Equal(t, w.Files, again.Files)
}

// Every problem of a commit's world is said at once, each naming its file
// as git show takes it.
func TestLoadNamesEveryProblem(t *testing.T) {
	files := demo(t)
	delete(files, "inputs/cluster-2.yaml")
	files["inputs/cluster-9.yaml"] = files["inputs/cluster-1.yaml"]
	files["inputs/cluster-3.yaml"] = []byte("kind: [\n")
	_, err := Load(files, name, now)
	require.Error(t, err)
	for _, want := range []string{
		`member "cluster-2": no snapshot of it (abc123:inputs/cluster-2/)`,
		`abc123:inputs/cluster-9/: no member "cluster-9" in the ClusterSet`,
		`abc123:inputs/cluster-3.yaml`,
	} {
		assert.ErrorContains(t, err, want)
	}

	delete(files, layout.ConfigFile)
	_, err = Load(files, name, now)
	require.EqualError(t, err, "abc123:clusterset.yaml: not found")
}
