// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/internal/yamlfast"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// fuzzMembers names the members FuzzRender builds; its inputs are their
// snapshots, in this order.
var fuzzMembers = []string{"cluster-1", "cluster-2", "cluster-3"}

// seedInputs returns up to three member snapshots per seed: the demo
// ClusterSet and the inputs of the scenario archives in fixtures/. Archives
// over 64 KiB are left out: the fuzzer spends its time copying and
// mutating them, and their golden test covers them.
func seedInputs(tb testing.TB) [][3][]byte {
	tb.Helper()
	var seeds [][3][]byte
	var demo [3][]byte
	for i, m := range fuzzMembers {
		data, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "demo", "inputs", m+".yaml"))
		if err != nil {
			tb.Fatal(err)
		}
		demo[i] = data
	}
	seeds = append(seeds, demo)
	archives, err := filepath.Glob(filepath.Join("..", "..", "fixtures", "*.txtar"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range archives {
		if fi, err := os.Stat(a); err != nil || fi.Size() > 64<<10 {
			continue
		}
		ar, err := txtar.ParseFile(a)
		if err != nil {
			tb.Fatal(err)
		}
		var in [3][]byte
		n := 0
		for _, f := range ar.Files {
			if strings.HasPrefix(f.Name, "inputs/") && n < len(in) {
				in[n] = f.Data
				n++
			}
		}
		if n > 0 {
			seeds = append(seeds, in)
		}
	}
	return seeds
}

// FuzzRender renders a three-member ClusterSet from fuzzed snapshot files
// and lays it out as files. It lives with the layout because it checks both.
// Whatever parses must render without panicking, render the same twice,
// serialize exactly as the sigs.k8s.io/yaml reference does, and give only
// objects a kube-apiserver would accept the names and labels of.
func FuzzRender(f *testing.F) {
	for _, s := range seedInputs(f) {
		for _, opts := range []byte{0, 1, 2, 3, 4, 12, 16, 32, 48 | 2, 64 | 12, 128, 128 | 12} {
			f.Add(s[0], s[1], s[2], opts)
		}
	}
	f.Fuzz(func(t *testing.T, in1, in2, in3 []byte, opts byte) {
		var snaps []*snapshot.Snapshot
		for i, data := range [][]byte{in1, in2, in3} {
			s, err := snapshot.Parse(fuzzMembers[i], fuzzMembers[i]+".yaml", data)
			if err != nil {
				return
			}
			snaps = append(snaps, s)
		}
		cfg := &v1alpha1.ClusterSet{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind, Metadata: v1alpha1.Metadata{Name: "fuzz"}}
		for _, m := range fuzzMembers {
			cfg.Spec.Members = append(cfg.Spec.Members, v1alpha1.Member{Name: m})
		}
		cfg.Spec.Render.CreateMissingNamespaces = opts&1 != 0
		if opts&2 != 0 {
			cfg.Spec.Render.ServiceImportAPIVersion = v1alpha1.ServiceImportV1Beta1
		}
		// Bit 4 puts cluster-2 in gateway mode; bit 8 gives every member a
		// gateway with a three-port TCP range and cluster-3 a mesh; bit 64
		// declares every gateway's TCP listeners in its Gateway.
		for i := range cfg.Spec.Members {
			m := &cfg.Spec.Members[i]
			if opts&4 != 0 && i == 1 || opts&8 != 0 {
				m.Gateway = &v1alpha1.Gateway{Host: fmt.Sprintf("192.0.2.%d", i+1), Namespace: "gw", Name: "east-west"}
			}
			if opts&4 != 0 && i == 1 {
				m.Mode = v1alpha1.ModeGateway
			}
			if opts&64 != 0 && m.Gateway != nil {
				m.Gateway.TCPListeners = v1alpha1.TCPListenersGateway
			}
			if opts&8 != 0 {
				m.Gateway.TCPPorts = &v1alpha1.PortRange{From: 30000, To: 30002}
				m.Mesh = i == 2
			}
		}
		// Bit 128 adds a reach policy: shop shared by env=b members only
		// (cluster-2 and cluster-3), shop/cart imported by cluster-2
		// alone, and no unlisted namespace exported.
		if opts&128 != 0 {
			for i := range cfg.Spec.Members {
				cfg.Spec.Members[i].Labels = map[string]string{"env": map[bool]string{true: "a", false: "b"}[i == 0]}
			}
			cfg.Spec.Reach = v1alpha1.ReachPolicy{Unlisted: v1alpha1.ReachNone, Namespaces: []v1alpha1.NamespaceReach{{
				Name: "shop", Members: &v1alpha1.MemberSelector{MatchLabels: map[string]string{"env": "b"}},
				Services: []v1alpha1.ServiceReach{{Name: "cart", Importers: v1alpha1.MemberSelector{Names: []string{"cluster-2"}}}},
			}}}
		}
		cfg.Default()
		// Bits 16 and 32 give the members IP families, as their
		// ServiceCIDRs would: unknown, or a rotation of IPv4-only,
		// IPv6-only and dual-stack, so single-stack members meet every
		// kind of export.
		stacks := [][]string{{"10.96.0.0/16"}, {"fd00:96::/112"}, {"10.96.0.0/16", "fd00:96::/112"}}
		if rot := int(opts>>4) & 3; rot != 0 {
			for i, s := range snaps {
				s.ServiceCIDRs = []networkingv1.ServiceCIDR{{ObjectMeta: metav1.ObjectMeta{Name: snapshot.DefaultServiceCIDR},
					Spec: networkingv1.ServiceCIDRSpec{CIDRs: stacks[(i+rot)%3]}}}
			}
		}

		out, err := render.Render(cfg, snaps, nil)
		if err != nil {
			return // ClusterSet-level problems, e.g. duplicate cluster IDs
		}
		files, err := Files(out)
		want, refErr := referenceFiles(out)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("Files error %v, reference error %v", err, refErr)
		}
		if err != nil {
			return
		}
		if msg := diffFileSets(want, files, ambiguousObjects(out)); msg != "" {
			t.Fatalf("Files differs from the sigs.k8s.io/yaml reference:\n%s", msg)
		}

		again, err := render.Render(cfg, snaps, nil)
		if err != nil {
			t.Fatalf("second render failed: %v", err)
		}
		files2, err := Files(again)
		if err != nil {
			t.Fatalf("second Files failed: %v", err)
		}
		if msg := diffFileSets(files, files2, nil); msg != "" {
			t.Fatalf("rendering twice differs:\n%s", msg)
		}

		objects := 0
		for _, m := range out.Members {
			seen := map[string]bool{}
			for _, o := range m.Objects {
				objects++
				if seen[o.Path] {
					t.Errorf("%s: two objects go to %s", m.Name, o.Path)
				}
				seen[o.Path] = true
				if path.Clean(o.Path) != o.Path || strings.HasPrefix(o.Path, "/") || strings.HasPrefix(o.Path, "..") {
					t.Errorf("%s: unsafe path %q", m.Name, o.Path)
				}
				for _, msg := range objectProblems(o) {
					t.Errorf("%s: %s: %s", m.Name, o.Path, msg)
				}
				if svc, ok := o.Object.(*corev1.Service); ok {
					// A single-stack apiserver refuses two pinned families,
					// and any apiserver a family it does not have.
					if len(svc.Spec.IPFamilies) > 1 {
						t.Errorf("%s: %s pins two IP families", m.Name, o.Path)
					}
					if fams := snapFamilies(snaps, m.Name); fams != nil {
						for _, f := range svc.Spec.IPFamilies {
							if !slices.Contains(fams, f) {
								t.Errorf("%s: %s asks for %s, which the member (%v) does not have", m.Name, o.Path, f, fams)
							}
						}
					}
				}
			}
		}
		// One file per object, kustomization and status, plus SUMMARY.md:
		// no two of them may land on the same path.
		wantFiles := objects + len(out.Members) + len(out.Report.Services) + 1
		if len(out.Report.Gateways) > 0 {
			wantFiles++ // status/gateways.yaml
		}
		if len(files) != wantFiles {
			t.Errorf("%d files for %d objects, %d members and %d services: paths collide", len(files), objects, len(out.Members), len(out.Report.Services))
		}
		checkStaged(t, cfg, snaps, files)
	})
}

// checkStaged renders snaps again with every service staged behind in
// cluster-2, from a world before in which cluster-1 exported nothing:
// the render succeeds, is deterministic, and leaves every member not
// behind exactly as the plain render has it (files, byte for byte).
func checkStaged(t *testing.T, cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot, plain map[string][]byte) {
	t.Helper()
	before := slices.Clone(snaps)
	c := *snaps[0]
	c.ServiceExports = nil
	before[0] = &c
	plainOut, err := render.Render(cfg, snaps, nil)
	if err != nil {
		t.Fatal(err)
	}
	behind := map[render.ImportKey]bool{}
	for _, s := range plainOut.Report.Services {
		behind[render.ImportKey{Member: "cluster-2", Namespace: s.Namespace, Name: s.Name}] = true
	}
	staged := func() map[string][]byte {
		out, err := render.RenderWith(cfg, snaps, render.Options{Staged: &render.Staged{Before: before, Behind: behind}})
		if err != nil {
			t.Fatalf("a staged render fails where the plain one does not: %v", err)
		}
		files, err := Files(out)
		if err != nil {
			t.Fatalf("Files of a staged render: %v", err)
		}
		return files
	}
	files := staged()
	if msg := diffFileSets(files, staged(), nil); msg != "" {
		t.Fatalf("rendering a staging twice differs:\n%s", msg)
	}
	for p, b := range plain {
		if (strings.HasPrefix(p, "clusters/cluster-1/") || strings.HasPrefix(p, "clusters/cluster-3/")) && !bytes.Equal(b, files[p]) {
			t.Errorf("%s: a member not behind changed under a staging", p)
		}
	}
	for p := range files {
		if (strings.HasPrefix(p, "clusters/cluster-1/") || strings.HasPrefix(p, "clusters/cluster-3/")) && plain[p] == nil {
			t.Errorf("%s: a member not behind got a file under a staging", p)
		}
	}
}

func snapFamilies(snaps []*snapshot.Snapshot, member string) []corev1.IPFamily {
	for _, s := range snaps {
		if s.Member == member {
			return s.IPFamilies()
		}
	}
	return nil
}

// objectProblems checks what the apiserver checks of every rendered
// object's metadata: the name for its kind, the namespace, labels and
// annotations.
func objectProblems(o render.Object) []string {
	acc, ok := o.Object.(metav1.Object)
	if !ok {
		return []string{fmt.Sprintf("%T has no object metadata", o.Object)}
	}
	kind := o.Object.GetObjectKind().GroupVersionKind().Kind
	var msgs []string
	var nameMsgs []string
	switch kind {
	case "ServiceImport", "Service":
		// A ServiceImport's name is a Service name, served in DNS as a label.
		nameMsgs = validation.IsDNS1035Label(acc.GetName())
	case "EndpointSlice", "HTTPRoute", "TCPRoute", "ListenerSet", "Gateway":
		nameMsgs = validation.IsDNS1123Subdomain(acc.GetName())
	case "Namespace":
		nameMsgs = validation.IsDNS1123Label(acc.GetName())
	default:
		msgs = append(msgs, "unexpected kind "+kind)
	}
	for _, m := range nameMsgs {
		msgs = append(msgs, fmt.Sprintf("%s name %q: %s", kind, acc.GetName(), m))
	}
	if kind != "Namespace" {
		for _, m := range validation.IsDNS1123Label(acc.GetNamespace()) {
			msgs = append(msgs, fmt.Sprintf("namespace %q: %s", acc.GetNamespace(), m))
		}
	}
	errs := metav1validation.ValidateLabels(acc.GetLabels(), field.NewPath("metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(acc.GetAnnotations(), field.NewPath("metadata", "annotations"))...)
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	switch obj := o.Object.(type) {
	case *discoveryv1.EndpointSlice:
		if len(obj.Endpoints) > 1000 {
			msgs = append(msgs, fmt.Sprintf("%d endpoints, over the 1000 a slice holds", len(obj.Endpoints)))
		}
	case *mcsv1alpha1.ServiceImport:
		for _, p := range obj.Spec.Ports {
			if p.Name != "" {
				for _, m := range validation.IsValidPortName(p.Name) {
					msgs = append(msgs, fmt.Sprintf("port name %q: %s", p.Name, m))
				}
			}
		}
	case *corev1.Service:
		for _, p := range obj.Spec.Ports {
			if p.Name != "" {
				for _, m := range validation.IsValidPortName(p.Name) {
					msgs = append(msgs, fmt.Sprintf("port name %q: %s", p.Name, m))
				}
			}
		}
	}
	return msgs
}

// referenceFiles is Files as it was before serialization was optimized:
// sequential, every file through sigs.k8s.io/yaml.
func referenceFiles(out *render.Output) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, m := range out.Members {
		resources := make([]string, 0, len(m.Objects))
		for _, o := range m.Objects {
			js, err := json.Marshal(o.Object)
			if err != nil {
				return nil, fmt.Errorf("member %q: %s: %w", m.Name, o.Path, err)
			}
			b, err := yamlfast.MarshalReference(js)
			if err != nil {
				return nil, fmt.Errorf("member %q: %s: %w", m.Name, o.Path, err)
			}
			files[MemberDir(m.Name)+o.Path] = b
			resources = append(resources, o.Path)
		}
		k, err := yaml.Marshal(map[string]any{
			"apiVersion": "kustomize.config.k8s.io/v1beta1",
			"kind":       "Kustomization",
			"resources":  resources,
		})
		if err != nil {
			return nil, fmt.Errorf("member %q: kustomization.yaml: %w", m.Name, err)
		}
		files[MemberDir(m.Name)+"kustomization.yaml"] = append([]byte(generatedHeader), k...)
	}
	for _, s := range out.Report.Services {
		b, err := yaml.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("status of %s/%s: %w", s.Namespace, s.Name, err)
		}
		files[ServiceStatusFile(s.Namespace, s.Name)] = append([]byte(generatedHeader), b...)
	}
	if len(out.Report.Gateways) > 0 {
		b, err := yaml.Marshal(gatewaysDoc{Gateways: out.Report.Gateways})
		if err != nil {
			return nil, fmt.Errorf("gateways: %w", err)
		}
		files[GatewaysFile] = append([]byte(generatedHeader), b...)
	}
	names := make([]string, len(out.Members))
	for i, m := range out.Members {
		names[i] = m.Name
	}
	files[SummaryFile] = []byte(Summary(&out.Report, names))
	return files, nil
}

// ambiguousObjects lists the object files whose YAML key order yaml.v2
// does not define (see yamlfast.KeyOrderAmbiguous).
func ambiguousObjects(out *render.Output) map[string]bool {
	paths := map[string]bool{}
	for _, m := range out.Members {
		for _, o := range m.Objects {
			js, err := json.Marshal(o.Object)
			if err != nil {
				continue
			}
			var v any
			if json.Unmarshal(js, &v) == nil && yamlfast.KeyOrderAmbiguous(v) {
				paths[MemberDir(m.Name)+o.Path] = true
			}
		}
	}
	return paths
}

// diffFileSets describes how got differs from want, ignoring the paths in
// skip.
func diffFileSets(want, got map[string][]byte, skip map[string]bool) string {
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		if skip[p] {
			continue
		}
		w, wok := want[p]
		g, gok := got[p]
		switch {
		case !gok:
			fmt.Fprintf(&b, "missing %s\n", p)
		case !wok:
			fmt.Fprintf(&b, "extra %s\n", p)
		case !bytes.Equal(w, g):
			fmt.Fprintf(&b, "%s:\n--- want\n%s\n--- got\n%s\n", p, w, g)
		}
	}
	return b.String()
}

// TestFilesMatchReferenceGenerated runs the comparison FuzzRender makes on a
// generated ClusterSet, which has more variety of the common kinds (headless
// services, app protocols, many namespaces) than the scenarios.
func TestFilesMatchReferenceGenerated(t *testing.T) {
	cfg, snaps := generate.ClusterSet(generate.Params{Members: 4, Services: 60, ExportersPerService: 2, EndpointsPerExporter: 5, Seed: 3})
	out, err := render.Render(cfg, snaps, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Files(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := referenceFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	if msg := diffFileSets(want, got, nil); msg != "" {
		t.Fatal(msg)
	}
}
