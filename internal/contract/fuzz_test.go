// SPDX-License-Identifier: Apache-2.0

package contract_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// FuzzContract: for any set of objects (YAML documents, as a tampered
// commit could hold) and any member, Check never panics, and what it
// accepts has the security properties stated here independently of its
// rules: no Service exposed beyond a cluster IP or redirected, no slice
// feeding a Service the commit does not render, no route or ListenerSet on
// a Gateway other than the member's, no Namespace unless asked for, and
// none with a label but ours.
func FuzzContract(f *testing.F) {
	// The seeds are every fixture's rendered member directories, read from
	// the archives as files: importing the renderer's test helpers (or the
	// applier, for its kustomize build) would link so much into the fuzz
	// binary that coverage bookkeeping, not the target, took the time.
	for _, ar := range fixtureArchives(f) {
		var cfg *v1alpha1.ClusterSet
		var err error
		dirs := map[string]*bytes.Buffer{}
		for _, file := range ar.Files {
			if file.Name == "clusterset.yaml" {
				if cfg, err = v1alpha1.Parse(ar.name, file.Data); err != nil {
					f.Fatal(err)
				}
			}
			rest, ok := strings.CutPrefix(file.Name, "clusters/")
			member, name, _ := strings.Cut(rest, "/")
			if !ok || name == "kustomization.yaml" {
				continue
			}
			if dirs[member] == nil {
				dirs[member] = &bytes.Buffer{}
			}
			dirs[member].WriteString("---\n")
			dirs[member].Write(file.Data)
		}
		for i := range cfg.Spec.Members {
			m := &cfg.Spec.Members[i]
			b := dirs[m.Name]
			if b == nil || b.Len() > maxFuzzInput {
				continue
			}
			c := contract.MemberOf(cfg, m)
			var flags uint8
			if c.GatewayName != "" {
				flags |= 1
			}
			if c.CreateMissingNamespaces {
				flags |= 2
			}
			f.Add(b.Bytes(), flags)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, flags uint8) {
		if len(data) > maxFuzzInput {
			return // the mutator's time goes to shapes, not to YAML volume
		}
		m := contract.Member{Name: "m", CreateMissingNamespaces: flags&2 != 0}
		if flags&1 != 0 {
			m.GatewayNamespace, m.GatewayName = "fsm-system", "east-west"
		}
		var objs []*unstructured.Unstructured
		for _, doc := range bytes.Split(data, []byte("---\n")) {
			u := &unstructured.Unstructured{}
			if yaml.Unmarshal(doc, &u.Object) != nil || u.Object == nil {
				continue
			}
			objs = append(objs, u)
		}
		refused := map[int]bool{}
		violations := contract.Check(m, objs)
		for _, v := range violations {
			refused[v.Index] = true
		}
		// Checked again after a commit without its last object, the same.
		if n := len(objs); n > 0 {
			_, last := contract.CheckAgain(m, objs[:n-1], nil)
			if again, _ := contract.CheckAgain(m, objs, last); !reflect.DeepEqual(again, violations) {
				t.Fatalf("checked again: %v, want %v", again, violations)
			}
		}
		services := map[string]bool{}
		for _, u := range objs {
			if u.GetKind() == "Service" && u.GetAPIVersion() == "v1" {
				services[u.GetNamespace()+"/"+u.GetName()] = true
			}
		}
		for i, u := range objs {
			if refused[i] {
				continue
			}
			if why := unsafe(m, u, services); why != "" {
				t.Fatalf("accepted %s %s/%s: %s", u.GetKind(), u.GetNamespace(), u.GetName(), why)
			}
		}
	})
}

// fixtureArchives reads every fixture scenario as plain txtar, in file
// name order: the fuzz seeds come from them without linking the fixtures
// package's renderer helpers into the fuzz binary.
func fixtureArchives(f *testing.F) []fixtureArchive {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("..", "..", "fixtures", "*.txtar"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	out := make([]fixtureArchive, len(names))
	for i, n := range names {
		out[i].name = n
		if out[i].Archive, err = txtar.ParseFile(n); err != nil {
			f.Fatal(err)
		}
	}
	return out
}

type fixtureArchive struct {
	name string
	*txtar.Archive
}

// maxFuzzInput keeps the seeds to the fixtures of ordinary size.
const maxFuzzInput = 16 << 10

// unsafe restates what must never reach a member, without the contract's
// code.
func unsafe(m contract.Member, u *unstructured.Unstructured, services map[string]bool) string {
	if u.GetLabels()[render.ManagedByLabel] != render.ManagedByValue {
		return "no managed-by label"
	}
	has := func(path ...string) bool {
		_, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		return ok
	}
	switch u.GetKind() {
	case "Service":
		for _, p := range [][]string{{"spec", "selector"}, {"spec", "externalIPs"}, {"spec", "loadBalancerIP"},
			{"spec", "externalName"}, {"spec", "loadBalancerSourceRanges"}, {"spec", "healthCheckNodePort"}} {
			if has(p...) {
				return "has " + p[1]
			}
		}
		if t, _, _ := unstructured.NestedString(u.Object, "spec", "type"); t != "ClusterIP" {
			return "type " + t
		}
		ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		for _, p := range ports {
			if pm, ok := p.(map[string]any); ok && pm["nodePort"] != nil {
				return "has a node port"
			}
		}
	case "EndpointSlice":
		target := u.GetNamespace() + "/" + u.GetLabels()[discoveryv1.LabelServiceName]
		if !services[target] {
			return "feeds " + target + ", not a Service of the set"
		}
	case "HTTPRoute", "TCPRoute":
		refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
		for _, r := range refs {
			rm, _ := r.(map[string]any)
			kind, _ := rm["kind"].(string)
			if kind == "" || kind == "Gateway" {
				ns, ok := rm["namespace"].(string)
				if !ok {
					ns = u.GetNamespace()
				}
				if m.GatewayName == "" || rm["name"] != m.GatewayName || ns != m.GatewayNamespace {
					return "attached to another Gateway"
				}
			}
		}
	case "ListenerSet":
		name, _, _ := unstructured.NestedString(u.Object, "spec", "parentRef", "name")
		if m.GatewayName == "" || name != m.GatewayName {
			return "attached to another Gateway"
		}
		ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
		for _, l := range ls {
			lm, _ := l.(map[string]any)
			from, _, _ := unstructured.NestedString(lm, "allowedRoutes", "namespaces", "from")
			if from != "Same" {
				return "a listener open to other namespaces"
			}
		}
	case "Namespace":
		if !m.CreateMissingNamespaces {
			return "a Namespace without createMissingNamespaces"
		}
		keys := slices.Collect(func(yield func(string) bool) {
			for k := range u.GetLabels() {
				if !yield(k) {
					return
				}
			}
		})
		if len(keys) != 1 || len(u.GetAnnotations()) != 0 {
			return "a Namespace with foreign labels or annotations"
		}
	}
	return ""
}
