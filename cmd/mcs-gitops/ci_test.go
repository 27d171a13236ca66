// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"encoding/xml"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// editInput replaces the first old in the member's snapshot of the demo
// copy in dir.
func editInput(t *testing.T, dir, member, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "inputs", member+".yaml")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
}

// conflictedDemo is the demo with cluster-3 exporting httpbin on another
// port than cluster-1: a PortConflict on both exports.
func conflictedDemo(t *testing.T) (dir string, args []string) {
	dir = copyDemo(t)
	editInput(t, dir, "cluster-3", "port: 8000", "port: 8001")
	return dir, []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs")}
}

func TestValidateFailOn(t *testing.T) {
	_, args := conflictedDemo(t)
	validate := func(extra ...string) (string, error) {
		return run(t, append(append([]string{"validate"}, args...), extra...)...)
	}

	out, err := validate()
	require.NoError(t, err, "problems are not errors by default")
	// Both exports conflict, and cluster-3's serves nothing: every port lost.
	assert.Contains(t, out, "3 problem(s)")

	_, err = validate("--fail-on=invalid,CONFLICT")
	assert.Equal(t, 1, exitCode(err))
	assert.ErrorContains(t, err, "2 finding(s) of a kind in --fail-on")
	assert.ErrorContains(t, err, "Conflict: httpbin/httpbin from cluster-1: PortConflict")
	assert.ErrorContains(t, err, "Conflict: httpbin/httpbin from cluster-3: PortConflict")

	_, err = validate("--fail-on", "Invalid, warning,missingnamespace,policy")
	assert.NoError(t, err, "no problem of those kinds")

	_, err = validate("--fail-on=notready")
	assert.Equal(t, 1, exitCode(err))
	assert.ErrorContains(t, err, "NotReady: httpbin/httpbin from cluster-3: Failed: not exported: none of its ports is a port of the ServiceImport")

	_, err = validate("--fail-on=conflicts")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, `unknown kind "conflicts"; valid kinds: problems invalid, conflict, notready, missingnamespace, warning, policy; changes withdrawal`)

	// Changes are against the rendered tree beside --inputs (none here:
	// everything is new).
	_, err = validate("--fail-on=new-conflict")
	assert.Equal(t, 1, exitCode(err))
	assert.ErrorContains(t, err, "new-conflict: httpbin/httpbin: cluster-3's export: PortConflict")
	_, err = validate("--fail-on=withdrawal")
	assert.NoError(t, err)

	_, err = validate("-o", "yaml")
	assert.Equal(t, 2, exitCode(err))
}

func TestValidateJSON(t *testing.T) {
	_, args := conflictedDemo(t)
	out, err := run(t, append([]string{"validate", "-o", "json", "--fail-on=conflict"}, args...)...)
	assert.Equal(t, 1, exitCode(err))
	var got validateJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, []string{"cluster-1", "cluster-2", "cluster-3"}, got.Members)
	assert.Equal(t, []string{"db/postgres", "httpbin/httpbin"}, got.Services)
	assert.Equal(t, []string{}, got.Warnings)
	require.Len(t, got.Problems, 3)
	assert.Equal(t, problemJSON{Kind: "Conflict", Service: "httpbin/httpbin", Member: "cluster-3", Reason: "PortConflict",
		Message: got.Problems[1].Message}, got.Problems[1])
	assert.Contains(t, got.Problems[1].Message, `port "http" 8001/TCP conflicts`)
}

// The stale error names each way the tree differs, and -o json lists the
// paths of each.
func TestRenderCheckSaysWhatIsStale(t *testing.T) {
	dir := copyDemo(t)
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"), "--out", dir}
	_, err := run(t, append([]string{"render"}, args...)...)
	require.NoError(t, err)
	out, err := run(t, append([]string{"render", "--check", "-o", "json"}, args...)...)
	require.NoError(t, err)
	assert.JSONEq(t, `{"stale": false, "files": {"changed": [], "added": [], "removed": []}}`, out)

	edited := filepath.Join(dir, "clusters", "cluster-1", "httpbin", "httpbin", "serviceimport.yaml")
	b, err := os.ReadFile(edited)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(edited, append(b, "# edited by hand\n"...), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "clusters", "cluster-2", "db", "postgres", "serviceimport.yaml")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "clusters", "cluster-2", "extra.yaml"), []byte("x: 1\n"), 0o644))

	_, err = run(t, append([]string{"render", "--check"}, args...)...)
	assert.Equal(t, 1, exitCode(err))
	assert.EqualError(t, err, "rendered output under "+filepath.Clean(dir)+
		" is stale: 1 file(s) differ, 1 rendered file(s) missing, 1 file(s) no longer rendered; run mcs-gitops render")

	out, err = run(t, append([]string{"render", "--check", "-o", "json"}, args...)...)
	assert.Equal(t, 1, exitCode(err))
	var got renderCheckJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.True(t, got.Stale)
	assert.Equal(t, []string{"clusters/cluster-2/db/postgres/serviceimport.yaml"}, got.Files.Added)
	assert.Equal(t, []string{"clusters/cluster-2/extra.yaml"}, got.Files.Removed)
	assert.Equal(t, []string{"clusters/cluster-1/httpbin/httpbin/serviceimport.yaml"}, got.Files.Changed)

	_, err = run(t, append([]string{"render", "-o", "json"}, args...)...)
	assert.Equal(t, 2, exitCode(err), "-o json needs --check")
}

// --summary says per member what re-rendering would change, with the
// problems, the same bytes every time; it is appended, so two commands
// can share one file.
func TestSummary(t *testing.T) {
	dir := copyDemo(t)
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs")}
	_, err := run(t, append([]string{"render", "--out", dir}, args...)...)
	require.NoError(t, err)
	// cluster-3 stops exporting httpbin, and cluster-2 no longer has the
	// db namespace.
	editInput(t, dir, "cluster-3", "  name: httpbin\n  namespace: httpbin\n  creationTimestamp", "  name: gone\n  namespace: httpbin\n  creationTimestamp")
	editInput(t, dir, "cluster-2", "    name: db\n", "    name: other\n")

	summary := filepath.Join(t.TempDir(), "summary.md")
	_, err = run(t, append([]string{"render", "--check", "--out", dir, "--summary", summary}, args...)...)
	assert.Equal(t, 1, exitCode(err))
	first, err := os.ReadFile(summary)
	require.NoError(t, err)
	md := string(first)
	assert.True(t, strings.HasPrefix(md, "## mcs-gitops: remove db/postgres from cluster-2"), md)
	assert.Contains(t, md, "| cluster-2 | 0 | 1 | 1 | 1 |\n")
	assert.Contains(t, md, "| cluster-1 | 0 | 0 | 1 | 0 |\n")
	assert.Contains(t, md, "### cluster-2\n\n- import removed: `db/postgres`\n- import changed: `httpbin/httpbin`\n")
	assert.Contains(t, md, "- **Invalid** httpbin/gone from cluster-3: NoService")
	assert.Contains(t, md, "- **MissingNamespace** db/postgres: namespace db does not exist in cluster-2")

	_, err = run(t, append([]string{"validate", "--summary", summary}, args...)...)
	require.NoError(t, err)
	both, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Equal(t, md+md, string(both), "validate summarizes the same change, byte for byte")
}

// diff -o json has its documented shape even when nothing could be read.
func TestDiffJSON(t *testing.T) {
	cfg := writeConfig(t, "")
	repo := t.TempDir()
	_, err := git.PlainInit(repo, false)
	require.NoError(t, err)
	summary := filepath.Join(t.TempDir(), "summary.md")
	out, err := run(t, "diff", "--config", cfg, "--repo", repo, "-o", "json", "--summary", summary)
	assert.Equal(t, 1, exitCode(err))
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &got), out)
	assert.ElementsMatch(t, []string{"message", "files", "members", "problems", "unread", "change", "findings"}, slices.Collect(maps.Keys(got)))
	change := got["change"].(map[string]any)
	assert.Equal(t, []any{}, change["services"])
	require.Len(t, change["members"], 1, "the model says the member went unreachable")
	m := change["members"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{"down", "Reachable", "Unreachable"}, []any{m["name"], m["old"], m["new"]})
	assert.Equal(t, []any{}, got["findings"], "unreachable with its exports kept moves no reach: no --fail-on member")
	assert.Contains(t, got["message"], "down")
	assert.Equal(t, []any{map[string]any{"member": "down", "importsAdded": []any{}, "importsRemoved": []any{}, "importsChanged": []any{}}}, got["members"])
	assert.Len(t, got["unread"], 1)
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "| down | 0 | 0 | 0 | 0 |")
}

// A link under status/ is never read for the summary, as render --check
// never reads it: the check still reports it as stale.
func TestSummaryDoesNotFollowLinks(t *testing.T) {
	dir := copyDemo(t)
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", filepath.Join(dir, "inputs"), "--out", dir}
	_, err := run(t, append([]string{"render"}, args...)...)
	require.NoError(t, err)
	secret := filepath.Join(t.TempDir(), "secret.yaml")
	require.NoError(t, os.WriteFile(secret, []byte("namespace: httpbin\nname: evil\n"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "status", "httpbin", "evil.yaml")))

	summary := filepath.Join(t.TempDir(), "summary.md")
	_, err = run(t, append([]string{"render", "--check", "--summary", summary}, args...)...)
	assert.Equal(t, 1, exitCode(err), "%v", err)
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.NotContains(t, string(md), "evil")
}

// A snapshot file that loads but is most likely wrong (a creationTimestamp
// in the future, an EndpointSlice whose label names no Service) is a
// problem of kind Warning naming file, member and object: validate lists
// it and exits 0, --fail-on=warning fails on it, -o json lists it, and
// render says it on stderr.
func TestValidateWarnsAboutSnapshotFiles(t *testing.T) {
	dir := copyDemo(t)
	editInput(t, dir, "cluster-1", `creationTimestamp: "2026-11-01T09:00:00Z"`, `creationTimestamp: "2099-01-01T00:00:00Z"`)
	editInput(t, dir, "cluster-3", "kubernetes.io/service-name: postgres", "kubernetes.io/service-name: postgre")
	inputs := filepath.Join(dir, "inputs")
	args := []string{"--config", filepath.Join(dir, "clusterset.yaml"), "--inputs", inputs}
	future := filepath.Join(inputs, "cluster-1.yaml") + ":11: member cluster-1: ServiceExport httpbin/httpbin: metadata.creationTimestamp 2099-01-01T00:00:00Z is in the future"
	orphan := filepath.Join(inputs, "cluster-3.yaml") + `:76: member cluster-3: EndpointSlice db/postgres-h2v8c: label kubernetes.io/service-name is "postgre", but this snapshot holds no Service db/postgre; no export uses its endpoints`

	out, err := run(t, append([]string{"validate"}, args...)...)
	require.NoError(t, err, "warnings are not errors by default")
	assert.True(t, strings.HasPrefix(out, future), out)
	assert.Contains(t, out, "\n"+orphan+"\n")
	// The typo leaves db/postgres without endpoints; nothing else says so.
	assert.Contains(t, out, "2 problem(s)")

	_, err = run(t, append([]string{"validate", "--fail-on=warning"}, args...)...)
	assert.Equal(t, 1, exitCode(err))
	assert.ErrorContains(t, err, "\n  Warning: "+future)
	assert.ErrorContains(t, err, "\n  Warning: "+orphan)

	out, err = run(t, append([]string{"validate", "-o", "json"}, args...)...)
	require.NoError(t, err)
	var got validateJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.GreaterOrEqual(t, len(got.Problems), 2)
	assert.Equal(t, problemJSON{Kind: "Warning", Member: "cluster-1", Message: got.Problems[0].Message}, got.Problems[0])
	assert.True(t, strings.HasPrefix(got.Problems[0].Message, future), got.Problems[0].Message)
	assert.Equal(t, problemJSON{Kind: "Warning", Member: "cluster-3", Message: orphan}, got.Problems[1])

	out, err = run(t, append([]string{"render", "--out", dir}, args...)...)
	require.NoError(t, err)
	assert.Contains(t, out, "warning: "+future)
	assert.Contains(t, out, "warning: "+orphan+"\n")
}

// -o junit: a test case per service, failed by --fail-on's kinds, with
// the other problems in its output; GitLab reads it in a merge request.
func TestValidateJUnit(t *testing.T) {
	_, args := conflictedDemo(t)
	out, err := run(t, append([]string{"validate", "-o", "junit", "--fail-on=conflict"}, args...)...)
	assert.Equal(t, 1, exitCode(err))
	var got junitSuites
	require.NoError(t, xml.Unmarshal([]byte(out[:strings.LastIndex(out, ">")+1]), &got), out)
	assert.Equal(t, 2, got.Tests)
	assert.Equal(t, 1, got.Failures)
	require.Len(t, got.Suites, 1)
	cases := got.Suites[0].Cases
	require.Len(t, cases, 2)
	assert.Equal(t, "db/postgres", cases[0].Name)
	assert.Nil(t, cases[0].Failure)
	assert.Equal(t, "httpbin/httpbin", cases[1].Name)
	require.NotNil(t, cases[1].Failure)
	assert.Equal(t, "Conflict", cases[1].Failure.Type)
	assert.Contains(t, cases[1].Failure.Text, "Conflict: httpbin/httpbin from cluster-3: PortConflict")
	assert.Contains(t, cases[1].SystemOut, "NotReady: httpbin/httpbin from cluster-3", "a problem of a kind not named is output, not a failure")

	_, err = run(t, append([]string{"render", "-o", "junit"}, args...)...)
	assert.Equal(t, 2, exitCode(err))
}
