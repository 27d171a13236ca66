// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const partsSnapshot = `apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: Namespace
metadata: {name: a-b}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a-b}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: a, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: stray.slice, namespace: a, labels: {kubernetes.io/service-name: Not_A_Name}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.2]}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: web, namespace: a, creationTimestamp: "2026-01-01T00:00:00Z"}
`

// A formatted snapshot is parts: the member-wide one, then one per
// service by namespace and name (not by the joined string, where "a-b/"
// sorts before "a/"); each service's objects together; a slice whose
// label names no possible Service in a part of its own. Split and join
// give the same bytes back, in whatever order the parts are joined.
func TestFormatParts(t *testing.T) {
	s, err := Parse("m", "m.yaml", []byte(partsSnapshot))
	require.NoError(t, err)
	out, err := Format(s)
	require.NoError(t, err)
	parts, err := SplitParts(out)
	require.NoError(t, err)
	var names []string
	for _, p := range parts {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{ClusterPart, "a/stray.slice", "a/web", "a-b/web"}, names)
	assert.Equal(t, "--- # a/web\napiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\n", string(parts[2].Data[:len("--- # a/web\napiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\n")]))
	assert.Contains(t, string(parts[2].Data), "kind: Service\n")
	assert.Contains(t, string(parts[2].Data), "name: web-1\n")

	shuffled := slices.Clone(parts)
	slices.Reverse(shuffled)
	assert.Equal(t, out, joinParts(shuffled))
	again, err := Parse("m", "m.yaml", joinParts(shuffled))
	require.NoError(t, err)
	assert.Len(t, again.EndpointSlices, 2)
}

// What Format did not write is refused: data before the first marker, a
// part twice or out of order, a part name that would leave its directory.
func TestSplitPartsRefuses(t *testing.T) {
	for name, data := range map[string]string{
		"no marker":    "apiVersion: v1\nkind: Namespace\n",
		"out of order": "--- # a/web\nkind: Service\n--- # cluster\nkind: Namespace\n",
		"twice":        "--- # a/web\nkind: Service\n--- # a/web\nkind: Service\n",
		"escapes":      "--- # ../../etc/passwd\nkind: Service\n",
		"nested":       "--- # a/b/c\nkind: Service\n",
		"no newline":   "--- # cluster",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := SplitParts([]byte(data))
			assert.Error(t, err)
		})
	}
}

// writeParts writes the parts of data as a commit lays them out, under
// dir/member/.
func writeParts(t *testing.T, dir, member string, data []byte) {
	t.Helper()
	parts, err := SplitParts(data)
	require.NoError(t, err)
	for _, p := range parts {
		path := filepath.Join(dir, member, filepath.FromSlash(p.Name)+".yaml")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, p.Data, 0o644))
	}
}

// --inputs may be a checkout's inputs/, where each member's snapshot is
// split into parts: it reads as the one file does; an error names the
// part's file and line, a duplicate the other part; a member with both
// forms, or a directory of no member, is refused.
func TestLoadDirReadsParts(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	s, err := Parse("m", "m.yaml", []byte(partsSnapshot))
	require.NoError(t, err)
	formatted, err := Format(s)
	require.NoError(t, err)

	one := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(one, "m.yaml"), formatted, 0o644))
	split := t.TempDir()
	writeParts(t, split, "m", formatted)
	a, err := LoadDir(one, []string{"m"}, now)
	require.NoError(t, err)
	b, err := LoadDir(split, []string{"m"}, now)
	require.NoError(t, err)
	fa, err := Format(a[0])
	require.NoError(t, err)
	fb, err := Format(b[0])
	require.NoError(t, err)
	assert.Equal(t, fa, fb, "the parts read as the one file")
	assert.Equal(t, formatted, fb)

	web := filepath.Join(split, "m", "a", "web.yaml")
	data, err := os.ReadFile(web)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(web, append(data, []byte("---\nkind: Service\napiVersion: v1\nmetadata: {name: web-1, namespace: a\n")...), 0o644))
	_, err = LoadDir(split, []string{"m"}, now)
	require.Error(t, err)
	assert.Contains(t, err.Error(), web+":")

	require.NoError(t, os.WriteFile(web, data, 0o644))
	dup := filepath.Join(split, "m", "a", "zz.yaml")
	require.NoError(t, os.WriteFile(dup, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: a}\nspec: {ports: [{name: http, port: 80}]}\n"), 0o644))
	_, err = LoadDir(split, []string{"m"}, now)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "duplicate object (first at "+web+":")
	require.NoError(t, os.Remove(dup))

	require.NoError(t, os.WriteFile(filepath.Join(split, "m.yaml"), formatted, 0o644))
	_, err = LoadDir(split, []string{"m"}, now)
	assert.ErrorContains(t, err, "both")
	require.NoError(t, os.Remove(filepath.Join(split, "m.yaml")))

	require.NoError(t, os.Mkdir(filepath.Join(split, "gone"), 0o755))
	_, err = LoadDir(split, []string{"m"}, now)
	assert.ErrorContains(t, err, `no member "gone"`)
}

// joinParts joins parts in ComparePartNames order, whatever order they
// come in, as layout.InputSources and LoadDir order a snapshot's files.
func joinParts(parts []Part) []byte {
	sorted := slices.Clone(parts)
	slices.SortFunc(sorted, func(a, b Part) int { return ComparePartNames(a.Name, b.Name) })
	var out []byte
	for _, p := range sorted {
		out = append(out, p.Data...)
	}
	return out
}
