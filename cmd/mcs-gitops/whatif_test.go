// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An app repository's CI asks what its manifests would do across the
// ClusterSet before anything is deployed: a new export is reachable from
// the other members; an export that clashes with an older one is a new
// conflict that serves nothing, which --fail-on catches; the manifests can
// come from a directory or from kustomize build on stdin; bad input names
// the file or the member.
func TestDiffWhatIf(t *testing.T) {
	_, config := demoRepo(t)
	app := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(app, name), []byte(body), 0o644))
	}
	write("deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: echo, namespace: httpbin}\n")
	write("service.yaml", `apiVersion: v1
kind: Service
metadata: {name: echo, namespace: httpbin}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: echo, namespace: httpbin}
`)
	diff := func(stdin string, args ...string) (string, error) {
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetIn(bytes.NewBufferString(stdin))
		cmd.SetArgs(append([]string{"diff", "--config", config}, args...))
		err := cmd.Execute()
		return out.String(), err
	}

	out, err := diff("", "--with", app, "--in", "cluster-2")
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, "+ "+app+" in cluster-2")
	assert.Contains(t, out, "cluster-2 exports httpbin/echo to cluster-1, cluster-3")
	_, err = diff("", "--with", app, "--in", "cluster-2", "--fail-on=new-conflict,withdrawal")
	assert.NoError(t, err, "a new export that clashes with nothing")

	// The same export name as cluster-1's and cluster-3's older httpbin,
	// on another port: cluster-2's export loses and serves nothing.
	clash := `apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: httpbin}
spec:
  ports: [{name: http, port: 9000}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: httpbin, namespace: httpbin}
`
	out, err = diff(clash, "--with", "-", "--in", "cluster-2", "--fail-on=new-conflict")
	assert.Equal(t, 1, exitCode(err), out)
	assert.ErrorContains(t, err, "new-conflict: httpbin/httpbin: cluster-2's export: PortConflict")
	assert.Contains(t, out, "conflict on httpbin/httpbin: cluster-2's new export serves nothing")
	assert.Contains(t, out, "none of its ports is a port of the ServiceImport")

	// Taking the app out again is no change.
	out, err = diff("", "--without", app, "--in", "cluster-1")
	require.NoError(t, err, out)
	assert.Contains(t, out, "no change")

	_, err = diff("", "--with", app)
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "--with and --without need --in MEMBER")
	_, err = diff("", "--with", app, "--in", "cluster-9")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, "--in cluster-9: no such member in HEAD's clusterset.yaml (members: cluster-1, cluster-2, cluster-3)")
	write("broken.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
	_, err = diff("", "--with", app, "--in", "cluster-2")
	assert.Equal(t, 2, exitCode(err))
	assert.ErrorContains(t, err, filepath.Join(app, "broken.yaml")+":1")
	_, err = diff("", "--in", "cluster-2")
	assert.Equal(t, 2, exitCode(err))
}

// -o github turns problems and changes into GitHub Actions annotations on
// the file and line a reviewer edits: a new conflict from a pull request's
// snapshot on that member's ServiceExport, one from an app's manifests on
// the manifest; an error for a kind --fail-on names, a warning or notice
// otherwise; a message's newlines and a property's ':' escaped.
func TestDiffGitHubAnnotations(t *testing.T) {
	root, config := demoRepo(t)
	dir := filepath.Dir(config)
	gitRun(t, root, "checkout", "-q", "-b", "pr")
	p := filepath.Join(dir, "inputs", "cluster-3.yaml")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(data), "port: 8000")
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), "port: 8000", "port: 8001", 1)), 0o644))
	gitRun(t, root, "commit", "-q", "-am", "cluster-3 on 8001")
	line := 0
	for i, l := range strings.Split(string(data), "\n") {
		if l == "kind: ServiceExport" && line == 0 {
			line = i // the document starts on the line before, 1-based: i
		}
	}
	require.NotZero(t, line)

	out, err := run(t, "diff", "--config", config, "--base", "main", "-o", "github", "--fail-on=new-conflict")
	assert.Equal(t, 1, exitCode(err), out)
	assert.Contains(t, out, fmt.Sprintf("::error file=deploy/mcs/inputs/cluster-3.yaml,line=%d,title=mcs-gitops%%3A new-conflict::httpbin/httpbin: cluster-3's export: PortConflict\n", line))
	assert.Contains(t, out, fmt.Sprintf("::warning file=deploy/mcs/inputs/cluster-3.yaml,line=%d,title=mcs-gitops%%3A Conflict::httpbin/httpbin from cluster-3: PortConflict", line))
	assert.Regexp(t, `::error file=deploy/mcs/inputs/cluster-1.yaml,line=\d+,title=mcs-gitops%3A new-conflict::httpbin/httpbin: cluster-1's export: PortConflict\n`, out)

	// Without --fail-on naming it, a change is a notice; a message's
	// newline is escaped.
	out, _ = run(t, "diff", "--config", config, "--base", "main", "-o", "github")
	assert.Contains(t, out, fmt.Sprintf("::notice file=deploy/mcs/inputs/cluster-3.yaml,line=%d,title=mcs-gitops%%3A new-conflict::", line))
	assert.Equal(t, "a%0Ab%25", escapeData("a\nb%"))
	assert.Equal(t, "deploy%3Ax%2Cy", escapeProperty("deploy:x,y"))
}
