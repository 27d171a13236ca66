// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// render --check tells a change of renderer from a change of the world:
// when the checkout holds exactly what the loop's last commit holds and
// another build rendered that commit, it says the difference is the
// version's, naming both; a pull request that changed an input, or a
// commit this very build rendered, gets the plain stale message.
func TestRenderCheckNamesTheRenderer(t *testing.T) {
	root, config := demoRepo(t)
	dir := filepath.Dir(config)
	inputs := filepath.Join(dir, "inputs")
	check := func(extra ...string) (string, error) {
		return run(t, append([]string{"render", "--config", config, "--inputs", inputs, "--out", dir, "--check"}, extra...)...)
	}
	_, err := check()
	require.NoError(t, err)

	// v0.0.1 wrote every import with a comment this build does not write.
	imports, err := filepath.Glob(filepath.Join(dir, "clusters", "*", "*", "*", "serviceimport.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, imports)
	for _, p := range imports {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, append([]byte("# written by v0.0.1\n"), b...), 0o644))
	}
	loopCommit := func(renderedBy string) {
		msg := "update the rendered tree\n\nSnapshot-Digest: sha256:0\n"
		if renderedBy != "" {
			msg += "Rendered-By: " + renderedBy + "\n"
		}
		gitRun(t, root, "add", "-A")
		gitRun(t, root, "commit", "-q", "--allow-empty", "-m", msg)
	}
	loopCommit("mcs-gitops v0.0.1; layout 0")
	old := gitOut(t, root, "rev-parse", "HEAD")[:12]

	got, err := check()
	assert.Equal(t, 1, exitCode(err), got)
	require.ErrorContains(t, err, "the difference is mcs-gitops's, not the ClusterSet's: commit "+old+
		", whose config and inputs this checkout holds unchanged, was rendered by mcs-gitops v0.0.1 (layout 0); this is mcs-gitops (devel) (layout 1)")
	assert.Contains(t, got, "-# written by v0.0.1", "the diff is printed as ever")
	got, err = check("-o", "json")
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, got, `"onlyRenderer": {`)
	assert.Contains(t, got, `"renderedBy": "mcs-gitops v0.0.1 (layout 0)"`)

	// A person's commit after it that touches nothing the loop owns: the
	// loop's commit is still found behind it.
	require.NoError(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("fleet\n"), 0o644))
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "docs")
	_, err = check()
	require.ErrorContains(t, err, "was rendered by mcs-gitops v0.0.1 (layout 0)")

	// A pull request that changed an input: the world changed too.
	snap := filepath.Join(inputs, "cluster-1.yaml")
	b, err := os.ReadFile(snap)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(snap, append(b, []byte("# edited\n")...), 0o644))
	_, err = check()
	require.ErrorContains(t, err, "run mcs-gitops render")
	assert.NotContains(t, err.Error(), "mcs-gitops's")
	require.NoError(t, os.WriteFile(snap, b, 0o644))

	// A loop from before the trailer.
	loopCommit("")
	_, err = check()
	require.ErrorContains(t, err, "was rendered by an mcs-gitops from before versions were recorded (layout 0); this is mcs-gitops (devel)")

	// This build's own commit that does not render to itself is a hand
	// edit or a bug, not a version's difference.
	loopCommit("mcs-gitops (devel); layout 1")
	_, err = check()
	require.ErrorContains(t, err, "run mcs-gitops render")
	assert.NotContains(t, err.Error(), "mcs-gitops's")

	// --inputs elsewhere than beside --out: render did not read what the
	// commit holds, and nothing is claimed.
	loopCommit("mcs-gitops v0.0.1; layout 0")
	elsewhere := t.TempDir()
	require.NoError(t, os.CopyFS(elsewhere, os.DirFS(inputs)))
	_, err = run(t, "render", "--config", config, "--inputs", elsewhere, "--out", dir, "--check")
	require.ErrorContains(t, err, "run mcs-gitops render")
	assert.NotContains(t, err.Error(), "mcs-gitops's")
}
