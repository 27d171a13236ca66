// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// demoRepo is a Git repository whose main holds the demo rendered, its
// ClusterSet under deploy/mcs/ (a sub-path, as spec.git.path has it).
func demoRepo(t *testing.T) (root, config string) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "deploy", "mcs")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../fixtures/demo")))
	config = filepath.Join(dir, "clusterset.yaml")
	_, err := run(t, "render", "--config", config, "--inputs", filepath.Join(dir, "inputs"), "--out", dir)
	require.NoError(t, err)
	gitRun(t, root, "init", "-q", "-b", "main")
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "base")
	return root, config
}

// diff --base renders both commits' worlds from Git and describes the
// change: whether or not the pull request re-rendered, the same change;
// a split snapshot reads as the one file; a ref that does not resolve or
// a world that does not load is exit 2 naming the ref and the file.
func TestDiffBase(t *testing.T) {
	root, config := demoRepo(t)
	dir := filepath.Dir(config)
	diff := func(args ...string) (string, error) {
		return run(t, append([]string{"diff", "--config", config}, args...)...)
	}

	out, err := diff("--base", "main")
	require.NoError(t, err, out)
	assert.Contains(t, out, "no change: main (")

	_, err = diff("--head", "main")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "--head needs --base")

	// A pull request changes a port, and does not re-render.
	gitRun(t, root, "checkout", "-q", "-b", "pr")
	for _, m := range []string{"cluster-1", "cluster-3"} {
		p := filepath.Join(dir, "inputs", m+".yaml")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(data), "port: 8000")
		require.NoError(t, os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "port: 8000", "port: 8001")), 0o644))
	}
	gitRun(t, root, "commit", "-q", "-am", "port 8001")
	out, err = diff("--base", "main")
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, "main (")
	assert.Contains(t, out, "httpbin/httpbin")
	assert.Contains(t, out, "+++ b/clusters/cluster-2/httpbin/httpbin/serviceimport.yaml")
	assert.Contains(t, out, "-    port: 8000\n+    port: 8001\n")
	unrendered := out

	// The author re-renders (render --check passes): the same change.
	_, err = run(t, "render", "--config", config, "--inputs", filepath.Join(dir, "inputs"), "--out", dir)
	require.NoError(t, err)
	gitRun(t, root, "commit", "-q", "-am", "re-render")
	out, err = diff("--base", "main", "-o", "json")
	assert.Equal(t, 1, exitCode(err))
	var j diffJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	assert.Len(t, j.Base, 40)
	assert.Len(t, j.Head, 40)
	assert.Len(t, j.Files.Changed, 7, "three importers, an import and a derived Service each, and the status")
	require.Len(t, j.Change.Services, 1)
	assert.Equal(t, "httpbin/httpbin", j.Change.Services[0].Key())
	assert.Equal(t, []change.Field{{Name: "port http", Old: "8000/TCP", New: "8001/TCP"}}, j.Change.Services[0].Fields)
	assert.Equal(t, []change.Finding{}, j.Findings, "a port change is none of the --fail-on change kinds")
	out, err = diff("--base", "main")
	assert.Equal(t, 1, exitCode(err))
	assert.Equal(t, afterSpan(unrendered), afterSpan(out), "re-rendered or not, the same change")
	out, err = diff("--base", "main", "--stat")
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, out, " clusters/cluster-2/httpbin/httpbin/serviceimport.yaml   |    2 +-\n")
	assert.Contains(t, out, " 7 file(s) changed, ")
	assert.NotContains(t, out, "+++ b/")

	// A snapshot split into parts, as a commit of the loop lays it out.
	one := filepath.Join(dir, "inputs", "cluster-2.yaml")
	data, err := os.ReadFile(one)
	require.NoError(t, err)
	snap, err := snapshot.Parse("cluster-2", one, data)
	require.NoError(t, err)
	formatted, err := snapshot.Format(snap)
	require.NoError(t, err)
	parts, err := layout.InputFiles("cluster-2", formatted)
	require.NoError(t, err)
	for p, b := range parts {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, b, 0o644))
	}
	require.NoError(t, os.Remove(one))
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "split cluster-2")
	out, err = diff("--base", "HEAD~1")
	require.NoError(t, err, "a split snapshot renders as the one file: %s", out)

	// Bad input names the ref and the file.
	_, err = diff("--base", "no-such-branch")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "no-such-branch")
	broken := filepath.Join(dir, "inputs", "cluster-1.yaml")
	require.NoError(t, os.WriteFile(broken, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: [\n"), 0o644))
	gitRun(t, root, "commit", "-q", "-am", "broken")
	_, err = diff("--base", "main")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "HEAD:deploy/mcs/inputs/cluster-1.yaml")
}

// afterSpan is diff's text without its first line, which names the
// commits.
func afterSpan(out string) string {
	_, rest, _ := strings.Cut(out, "\n")
	return rest
}

// On a terminal the patch is coloured as git colours it; the text stays
// the same once the colours are taken out. In a file or pipe it is never
// coloured (colours false), so a patch saved from CI applies.
func TestColourPatch(t *testing.T) {
	patch := "--- a/x.yaml\n+++ b/x.yaml\n@@ -1,2 +1,2 @@\n name: web\n-port: 8000\n+port: 8001\n"
	got := colourPatch(patch)
	assert.Contains(t, got, "\x1b[31m-port: 8000\x1b[m\n")
	assert.Contains(t, got, "\x1b[32m+port: 8001\x1b[m\n")
	assert.Contains(t, got, "\x1b[36m@@ -1,2 +1,2 @@\x1b[m\n")
	assert.Contains(t, got, "\x1b[1m--- a/x.yaml\x1b[m\n")
	assert.Contains(t, got, "\n name: web\n", "context lines are left alone")
	assert.Equal(t, patch, regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(got, ""))
	var buf strings.Builder
	assert.False(t, colours(&buf), "not a terminal")
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, colours(f), "a file is not a terminal")
}

// --fail-on decides diff's exit code: a change that withdraws a service
// from every member fails on withdrawal and passes on kinds it does not
// do; an unknown kind names the valid ones.
func TestDiffFailOn(t *testing.T) {
	root, config := demoRepo(t)
	dir := filepath.Dir(config)
	diff := func(args ...string) (string, error) {
		return run(t, append([]string{"diff", "--config", config, "--base", "main"}, args...)...)
	}
	gitRun(t, root, "checkout", "-q", "-b", "pr")
	p := filepath.Join(dir, "inputs", "cluster-3.yaml")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	unexport := "---\napiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata:\n  name: postgres\n  namespace: db\n  creationTimestamp: \"2026-11-03T08:00:00Z\"\n"
	require.Contains(t, string(data), unexport)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), unexport, "", 1)), 0o644))
	gitRun(t, root, "commit", "-q", "-am", "unexport postgres")

	_, err = diff()
	assert.Equal(t, 1, exitCode(err), "without --fail-on, any change is exit 1")
	_, err = diff("--fail-on=new-reachability,new-conflict,member,conflict")
	assert.NoError(t, err, "nothing of those kinds")
	_, err = diff("--fail-on", "Withdrawal")
	assert.Equal(t, 1, exitCode(err))
	assert.ErrorContains(t, err, "withdrawal: db/postgres: no longer imported by cluster-1, cluster-2, cluster-3")

	_, err = diff("--fail-on=withdrawals")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, `unknown kind "withdrawals"; valid kinds: problems invalid, conflict, notready, missingnamespace, warning, policy; changes withdrawal, new-reachability, new-conflict, policy, member`)

	// A member leaving is a member change, and a withdrawal from it.
	cs, err := os.ReadFile(config)
	require.NoError(t, err)
	member := "  - name: cluster-2\n    region: eu-west\n    zone: eu-west-1b\n    kubeconfig:\n      path: kubeconfigs/cluster-2.yaml\n"
	require.Contains(t, string(cs), member)
	require.NoError(t, os.WriteFile(config, []byte(strings.Replace(string(cs), member, "", 1)), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "inputs", "cluster-2.yaml")))
	gitRun(t, root, "commit", "-q", "-am", "cluster-2 leaves")
	_, err = diff("--fail-on=member,withdrawal")
	assert.Equal(t, 1, exitCode(err))
	assert.ErrorContains(t, err, "member: member cluster-2 leaves the ClusterSet")
	assert.ErrorContains(t, err, "withdrawal: httpbin/httpbin: no longer imported by cluster-2")
}
