// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An offline snapshot is typed by hand or pasted. An object of a kind a
// snapshot reads, misspelt, used to be skipped as "a kind the renderer
// does not use": the export vanished from the render and validate said
// 0 problems. Each of these is an error naming the file, the line and
// what was meant.
func TestParseRefusesNearMissKinds(t *testing.T) {
	const ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n"
	export := func(apiVersion, kind string) string {
		return ns + fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: web, namespace: shop, creationTimestamp: \"2026-01-01T00:00:00Z\"}\n", apiVersion, kind)
	}
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"misspelt kind", export("multicluster.x-k8s.io/v1alpha1", "ServiceExprot"), []string{"in.yaml:5:", "ServiceExprot", "did you mean ServiceExport"}},
		{"lower-case kind", export("multicluster.x-k8s.io/v1alpha1", "serviceexport"), []string{"in.yaml:5:", "did you mean ServiceExport"}},
		{"another kind of the MCS group", export("multicluster.x-k8s.io/v1alpha1", "ServiceExportPolicy"), []string{"in.yaml:5:", "not a kind of multicluster.x-k8s.io"}},
		{"misspelt group", export("multicluster.k8s.io/v1alpha1", "ServiceExport"), []string{"in.yaml:5:", "did you mean multicluster.x-k8s.io"}},
		{"misspelt version", export("multicluster.x-k8s.io/v1alpah1", "ServiceExport"), []string{"in.yaml:5:", "v1alpah1", "use multicluster.x-k8s.io/v1alpha1 or multicluster.x-k8s.io/v1beta1"}},
		{"plural kind", ns + "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlices\nmetadata: {name: s, namespace: shop}\naddressType: IPv4\n",
			[]string{"in.yaml:5:", "did you mean EndpointSlice"}},
		{"core kind with another version", ns + "apiVersion: v2\nkind: Service\nmetadata: {name: web, namespace: shop}\n",
			[]string{"in.yaml:5:", "apiVersion v2 is not supported, use v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("m", "in.yaml", []byte(tc.input))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}

	// What is not a near miss is still read or skipped as before: our own
	// ServiceImports in a pasted `kubectl get -A`, both served versions of
	// ServiceExport, and another group's Service (Knative's).
	ok := ns + "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: web, namespace: shop}\n---\n" +
		"apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n---\n" +
		"apiVersion: multicluster.x-k8s.io/v1beta1\nkind: ServiceExport\nmetadata: {name: web, namespace: shop, creationTimestamp: \"2026-01-01T00:00:00Z\"}\n"
	s, err := Parse("m", "in.yaml", []byte(ok))
	require.NoError(t, err)
	assert.Len(t, s.ServiceExports, 1)
	assert.Empty(t, s.Services, "a Knative Service is not a Service")
}

// `kubectl get ... -o yaml` of a busy member is one List document larger
// than one object may be. It was refused as one oversized object; only
// each item is held to the object limit, and an item over it says how to
// make a snapshot that fits.
func TestParseLargeList(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: shop}\n")
	for i := range 4000 {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Service\n  metadata: {name: svc-%04d, namespace: shop, annotations: {note: %q}}\n  spec:\n    ports:\n    - port: 80\n", i, strings.Repeat("x", 400))
	}
	require.Greater(t, b.Len(), MaxObjectBytes)
	s, err := Parse("m", "in.yaml", []byte(b.String()))
	require.NoError(t, err)
	assert.Len(t, s.Services, 4000)

	big := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {name: web, namespace: shop, annotations: {a: \"" + strings.Repeat("x", MaxObjectBytes) + "\"}}\n"
	_, err = Parse("m", "in.yaml", []byte(big))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over the")
	assert.Contains(t, err.Error(), "mcs-gitops snapshot")
}

// Every member's snapshot error is reported at once, not the first only.
func TestLoadDirReportsEveryMembersError(t *testing.T) {
	dir := t.TempDir()
	bad := "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExprot\nmetadata: {name: web, namespace: shop}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(bad), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: [\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"), 0o644))
	_, err := LoadDir(dir, []string{"a", "b", "c"}, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a.yaml:1:")
	assert.Contains(t, err.Error(), "b.yaml:1:")
	assert.NotContains(t, err.Error(), "c.yaml")
}

// A field of a ServiceExport or GlobalTrafficPolicy that mcs-gitops does
// not know, in a snapshot file (render, validate), is an error: a typo
// such as exportedLabelz was ignored, and the labels silently not
// exported. A live read stays lenient, so a member with a newer mcs-api
// that adds fields is still read.
func TestLoadDirRefusesUnknownFields(t *testing.T) {
	const ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n"
	for _, tc := range []struct{ name, doc, field string }{
		{"ServiceExport spec", "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: web, namespace: shop, creationTimestamp: \"2026-01-01T00:00:00Z\"}\nspec:\n  exportedLabelz: {team: a}\n", "exportedLabelz"},
		{"GlobalTrafficPolicy spec", "apiVersion: mcs-gitops.io/v1alpha1\nkind: GlobalTrafficPolicy\nmetadata: {name: web, namespace: shop}\nspec:\n  lbtype: FailOver\n", "lbtype"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(ns+tc.doc), 0o644))
			_, err := LoadDir(dir, []string{"a"}, time.Now())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "a.yaml:5:")
			assert.Contains(t, err.Error(), `unknown field "spec.`+tc.field+`"`)

			_, err = Parse("a", "live", []byte(ns+tc.doc))
			assert.NoError(t, err, "a live read is lenient")
		})
	}
}
