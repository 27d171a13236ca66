// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A snapshot file can load and still hold what is most likely a mistake,
// one that used to pass silently: a creationTimestamp in the future (a
// hand-typed 2099 makes its export lose every conflict), an EndpointSlice
// that names no Service of the snapshot (a typo in the label, and the
// export has no endpoints). ParseStrict warns, naming file, line, member
// and object, in file order; Parse, which reads what a member's apiserver
// served, does not.
func TestParseStrictWarns(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	const ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n"
	export := func(created string) string {
		return fmt.Sprintf("apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: web, namespace: shop, creationTimestamp: %q}\n", created)
	}
	svc := func(meta string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {%s}\nspec:\n  ports:\n  - port: 80\n", meta)
	}
	slice := func(meta string) string {
		return fmt.Sprintf("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {%s}\naddressType: IPv4\n", meta)
	}
	const (
		web       = "name: web, namespace: shop"
		webSlice  = "name: web-abc, namespace: shop, labels: {kubernetes.io/service-name: web}"
		typoSlice = "name: web-abc, namespace: shop, labels: {kubernetes.io/service-name: wbe}"
		// The message every future creationTimestamp starts with, at now.
		future = "metadata.creationTimestamp 2099-01-01T00:00:00Z is in the future: the clock reads 2026-11-26T10:00:00Z (5m0s of skew allowed)"
	)
	cases := []struct {
		name, input string
		want        []string
	}{
		{"nothing to warn about", ns + export("2026-11-01T09:00:00Z") + "---\n" + svc(web) + "---\n" + slice(webSlice), nil},
		{"export created in the future", ns + export("2099-01-01T00:00:00Z"), []string{
			"in.yaml:5: member east: ServiceExport shop/web: " + future + "; the oldest export wins a conflict, so this one would lose to every export created before that date"}},
		{"export created within the allowed skew", ns + export("2026-11-26T10:05:00Z"), nil},
		{"export created just past the allowed skew", ns + export("2026-11-26T10:05:01Z"), []string{
			"in.yaml:5: member east: ServiceExport shop/web: metadata.creationTimestamp 2026-11-26T10:05:01Z is in the future: the clock reads 2026-11-26T10:00:00Z (5m0s of skew allowed); the oldest export wins a conflict, so this one would lose to every export created before that date"}},
		{"Service created in the future", ns + svc(web+`, creationTimestamp: "2099-01-01T00:00:00Z"`), []string{
			"in.yaml:5: member east: Service shop/web: " + future}},
		{"Namespace created in the future", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, creationTimestamp: \"2099-01-01T00:00:00Z\"}\n", []string{
			"in.yaml:1: member east: Namespace shop: " + future}},
		{"slice labelled with a Service the snapshot does not hold", ns + svc(web) + "---\n" + slice(typoSlice), []string{
			`in.yaml:12: member east: EndpointSlice shop/web-abc: label kubernetes.io/service-name is "wbe", but this snapshot holds no Service shop/wbe; no export uses its endpoints`}},
		{"slice labelled with a Service of another namespace", ns + svc("name: web, namespace: other") + "---\n" + slice(webSlice), []string{
			`in.yaml:12: member east: EndpointSlice shop/web-abc: label kubernetes.io/service-name is "web", but this snapshot holds no Service shop/web; no export uses its endpoints`}},
		{"slice without the label", ns + svc(web) + "---\n" + slice("name: web-abc, namespace: shop"), []string{
			"in.yaml:12: member east: EndpointSlice shop/web-abc: has no kubernetes.io/service-name label, so it belongs to no Service and no export uses its endpoints"}},
		{"slice before its Service", ns + slice(webSlice) + "---\n" + svc(web), nil},
		// The member holds the Service; its export is reported Invalid.
		{"slice of a Service left out as unloadable", ns + slice(webSlice) + "---\napiVersion: mcs-gitops.io/v1alpha1\nkind: RejectedObject\nmetadata: {name: web, namespace: shop}\nspec: {kind: Service, service: web, message: m}\n", nil},
		{"in file order, List items at the List's line", ns + slice(typoSlice) + "---\napiVersion: v1\nkind: List\nitems:\n- " +
			"apiVersion: v1\n  kind: Service\n  metadata: {name: web, namespace: shop, creationTimestamp: \"2099-01-01T00:00:00Z\"}\n  spec: {ports: [{port: 80}]}\n", []string{
			`in.yaml:5: member east: EndpointSlice shop/web-abc: label kubernetes.io/service-name is "wbe", but this snapshot holds no Service shop/wbe; no export uses its endpoints`,
			"in.yaml:10: member east: Service shop/web: " + future}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseStrict("east", "in.yaml", []byte(tc.input), now)
			require.NoError(t, err, "a warning never refuses the file")
			assert.Equal(t, tc.want, s.Warnings)

			live, err := Parse("east", "in.yaml", []byte(tc.input))
			require.NoError(t, err)
			assert.Nil(t, live.Warnings, "a live read is not checked")
		})
	}
}

// LoadDir gives each member's snapshot the warnings of its file, judged
// against the clock it is given.
func TestLoadDirWarns(t *testing.T) {
	dir := t.TempDir()
	doc := "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, creationTimestamp: \"2026-11-26T10:00:00Z\"}\n"
	for _, m := range []string{"a", "b"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, m+".yaml"), []byte(doc), 0o644))
	}
	snaps, err := LoadDir(dir, []string{"a", "b"}, time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Len(t, snaps, 2)
	assert.Equal(t, []string{filepath.Join(dir, "b.yaml") + ":1: member b: Namespace shop: metadata.creationTimestamp 2026-11-26T10:00:00Z is in the future: the clock reads 2026-11-26T09:00:00Z (5m0s of skew allowed)"}, snaps[1].Warnings)

	snaps, err = LoadDir(dir, []string{"a", "b"}, time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Nil(t, snaps[0].Warnings)
	assert.Nil(t, snaps[1].Warnings)
}
