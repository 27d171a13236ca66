// SPDX-License-Identifier: Apache-2.0

package snapshot_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// FuzzParseSnapshot feeds arbitrary bytes to Parse. It must never panic,
// and whatever it accepts must survive the inputs/ round trip: Format's
// output parses again, formats to the same bytes (so a committed snapshot
// never churns) and parses to an equal snapshot, and rendering the
// formatted snapshot gives the same files as rendering the original, so
// Format drops nothing the renderer reads. ParseStrict refuses all Parse
// refuses, and what it accepts it reads as Parse does, warnings aside.
func FuzzParseSnapshot(f *testing.F) {
	demo, err := filepath.Glob(filepath.Join("..", "..", "fixtures", "demo", "inputs", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range demo {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	archives, err := filepath.Glob(filepath.Join("..", "..", "fixtures", "*.txtar"))
	if err != nil {
		f.Fatal(err)
	}
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if strings.HasPrefix(file.Name, "inputs/") {
				f.Add(file.Data)
			}
		}
	}
	for _, s := range []string{
		"", "---", "--- \n---\n", "null", "[]", "a: [", "apiVersion: v1\nkind: List\nitems: [null, 1]",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}",
		"apiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: cluster.clusterset.k8s.io}\nspec: {value: x}",
		"apiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: gateway-addresses.mcs-gitops.io}\nspec: {value: \"192.0.2.7, fd00::01,192.0.2.7\"}",
		"apiVersion: mcs-gitops.io/v1alpha1\nkind: GlobalTrafficPolicy\nmetadata: {name: web, namespace: shop}\nspec:\n  lbType: ActiveActive\n  targets:\n  - {clusterKey: //default/b, weight: 2}\n  - {clusterKey: r/z/default/c}\nstatus: {clusters: [b]}",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: mcs-gitops.io/v1alpha1\n  kind: GlobalTrafficPolicy\n  metadata: {name: web, namespace: shop}\n  spec: {lbType: FailOver}\n" +
			"- apiVersion: mcs-gitops.io/v1alpha1\n  kind: GlobalTrafficPolicy\n  metadata: {name: api, namespace: shop, deletionTimestamp: \"2026-10-01T00:00:00Z\"}\n  spec: {lbType: Locality, targets: [{clusterKey: //default/a, weight: -1}]}",
		"apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: kubernetes}\nspec: {cidrs: [\"fd00::/112\", 10.96.0.0/16]}",
		"apiVersion: mcs-gitops.io/v1alpha1\nkind: RejectedObject\nmetadata: {name: web-abc, namespace: shop}\nspec: {kind: EndpointSlice, service: web, message: \"ports[0].name: x\"}",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: multicluster.x-k8s.io/v1alpha1\n  kind: ServiceExport\n  metadata: {name: web, namespace: shop, creationTimestamp: \"2099-01-01T00:00:00Z\"}\n" +
			"- apiVersion: discovery.k8s.io/v1\n  kind: EndpointSlice\n  metadata: {name: web-abc, namespace: shop, labels: {kubernetes.io/service-name: wbe}}\n  addressType: IPv4\n" +
			"---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-def, namespace: shop}\naddressType: FQDN",
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		s1, err := snapshot.Parse("member", "member.yaml", data)
		strict, strictErr := snapshot.ParseStrict("member", "member.yaml", data, time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
		if err != nil {
			if strictErr == nil {
				t.Fatalf("ParseStrict accepts what Parse refuses: %v", err)
			}
			return
		}
		if strictErr == nil {
			checkStrict(t, s1, strict)
		}
		f1, err := snapshot.Format(s1)
		if err != nil {
			t.Fatalf("Format of a parsed snapshot: %v", err)
		}
		s2, err := snapshot.Parse("member", "formatted.yaml", f1)
		if err != nil {
			t.Fatalf("formatted snapshot does not parse: %v\n%s", err, f1)
		}
		f2, err := snapshot.Format(s2)
		if err != nil {
			t.Fatalf("Format of the re-parsed snapshot: %v", err)
		}
		if !bytes.Equal(f1, f2) {
			t.Fatalf("formatting is not stable:\n--- first\n%s\n--- second\n%s", f1, f2)
		}
		parts, err := snapshot.SplitParts(f1)
		if err != nil {
			t.Fatalf("a formatted snapshot does not split into its parts: %v\n%s", err, f1)
		}
		slices.Reverse(parts)
		slices.SortFunc(parts, func(a, b snapshot.Part) int { return snapshot.ComparePartNames(a.Name, b.Name) })
		var joined []byte
		for _, p := range parts {
			joined = append(joined, p.Data...)
		}
		if !bytes.Equal(joined, f1) {
			t.Fatalf("the parts joined are not the formatted snapshot:\n%s", joined)
		}
		s3, err := snapshot.Parse("member", "formatted.yaml", f2)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(s2, s3) {
			t.Fatalf("re-parsing the same formatted snapshot gave a different snapshot")
		}

		a, errA := renderOne(s1)
		b, errB := renderOne(s2)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("render error before Format %v, after %v", errA, errB)
		}
		if errA == nil {
			for p, data := range a {
				if !bytes.Equal(b[p], data) {
					t.Fatalf("%s differs after the Format round trip:\n--- before\n%s\n--- after\n%s", p, data, b[p])
				}
			}
			if len(a) != len(b) {
				t.Fatalf("%d files before the Format round trip, %d after", len(a), len(b))
			}
		}
	})
}

// checkStrict checks that ParseStrict read what Parse read, and that each
// of its warnings names the file and the member.
func checkStrict(t *testing.T, lenient, strict *snapshot.Snapshot) {
	t.Helper()
	for _, w := range strict.Warnings {
		if !strings.HasPrefix(w, "member.yaml:") || !strings.Contains(w, ": member member: ") {
			t.Fatalf("warning does not name the file and the member: %s", w)
		}
	}
	for ref, pos := range strict.Positions {
		if pos.File != "member.yaml" || pos.Line < 1 {
			t.Fatalf("%s read at %s:%d, not a line of member.yaml", ref, pos.File, pos.Line)
		}
	}
	read := *strict
	read.Warnings, read.Positions = nil, nil
	if !equality.Semantic.DeepEqual(lenient, &read) {
		t.Fatalf("ParseStrict read the snapshot differently from Parse")
	}
}

// renderOne renders a one-member ClusterSet: the member imports its own
// exports, so every field the renderer reads shows in the files.
func renderOne(s *snapshot.Snapshot) (map[string][]byte, error) {
	cfg := &v1alpha1.ClusterSet{
		APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind, Metadata: v1alpha1.Metadata{Name: "fuzz"},
		Spec: v1alpha1.ClusterSetSpec{Members: []v1alpha1.Member{{Name: s.Member}}},
	}
	cfg.Default()
	out, err := render.Render(cfg, []*snapshot.Snapshot{s}, nil)
	if err != nil {
		return nil, err
	}
	return layout.Files(out)
}
