// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// memberFiles renders a generated ClusterSet of 3 members each importing
// services services and returns the committed files and one member.
func memberFiles(tb testing.TB, services int) (map[string][]byte, string) {
	tb.Helper()
	p := generate.Params{Members: 3, Services: services, ExportersPerService: 2, EndpointsPerExporter: 10, Seed: 1}
	cfg, snaps := generate.ClusterSet(p)
	out, err := render.Render(cfg, snaps, nil)
	if err != nil {
		tb.Fatal(err)
	}
	files, err := layout.Files(out)
	if err != nil {
		tb.Fatal(err)
	}
	return files, cfg.Spec.Members[0].Name
}

// BenchmarkBuild times kustomize build of one member's directory beside
// its floor, a plain YAML decode of the same files.
func BenchmarkBuild(b *testing.B) {
	for _, services := range []int{100, 1000} {
		files, member := memberFiles(b, services)
		dir := layout.MemberDir(member)
		b.Run(fmt.Sprintf("services=%d/kustomize", services), func(b *testing.B) {
			for b.Loop() {
				if _, err := Build(files, member); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("services=%d/floor-decode", services), func(b *testing.B) {
			for b.Loop() {
				n := 0
				for p, data := range files {
					if !strings.HasPrefix(p, dir) || strings.HasSuffix(p, "/kustomization.yaml") {
						continue
					}
					u := &unstructured.Unstructured{}
					if err := yaml.Unmarshal(data, &u.Object); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
		})
	}
}

// BenchmarkBuildCache times a build through a BuildCache that built the
// same member before: no change, and one slice file changed (alternating
// between two versions, so every iteration rebuilds one chunk).
func BenchmarkBuildCache(b *testing.B) {
	for _, services := range []int{100, 1000} {
		files, member := memberFiles(b, services)
		dir := layout.MemberDir(member)
		var slice string
		for p, data := range files {
			if strings.HasPrefix(p, dir) && strings.Contains(string(data), "addresses:") && (slice == "" || p < slice) {
				slice = p
			}
		}
		moved := maps.Clone(files)
		moved[slice] = []byte(strings.Replace(string(files[slice]), "10.", "11.", 1))
		c := NewBuildCache()
		if _, err := c.Build(files, member); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("services=%d/no-change", services), func(b *testing.B) {
			for b.Loop() {
				if _, err := c.Build(files, member); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("services=%d/one-change", services), func(b *testing.B) {
			worlds := [2]map[string][]byte{moved, files}
			i := 0
			for b.Loop() {
				if _, err := c.Build(worlds[i%2], member); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkBeforeApply times what an apply does with a member's 4,000
// built objects before it sends anything, when nothing changed (the
// BuildCache hands out the same objects, the Memory knows them all):
// prepare, the contract check (and the Memory's answer for it) and the
// Memory's split, each alone.
func BenchmarkBeforeApply(b *testing.B) {
	files, member := memberFiles(b, 1000)
	c := NewBuildCache()
	objs, err := c.Build(files, member)
	if err != nil {
		b.Fatal(err)
	}
	a := &Applier{Member: member, ClusterSet: "bench", Memory: NewMemory(time.Hour)}
	desired, err := a.prepare(objs)
	if err != nil {
		b.Fatal(err)
	}
	keys := map[objKey]bool{}
	for _, d := range desired {
		keys[keyOf(d.obj)] = true
	}
	a.Memory.split(desired, time.Now())
	a.Memory.remember(desired, keys)
	b.Run("prepare", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.prepare(objs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("contract", func(b *testing.B) {
		for b.Loop() {
			if v := contract.Check(contract.Member{Name: member}, objs); len(v) != 0 {
				b.Fatal(v[0])
			}
		}
	})
	b.Run("contract-remembered", func(b *testing.B) {
		for b.Loop() {
			if v := a.Memory.checkContract(contract.Member{Name: member}, objs); len(v) != 0 {
				b.Fatal(v[0])
			}
		}
	})
	// One slice moved, every other cycle, as a BuildCache hands it out:
	// its chunk built again (about 32 files, 128 objects), every object of
	// it new, all but the slice equal to the last.
	moved := slices.Clone(objs)
	i := slices.IndexFunc(moved, func(u *unstructured.Unstructured) bool { return u.GetKind() == "EndpointSlice" })
	for j := max(0, i-64); j < min(len(moved), i+64); j++ {
		moved[j] = moved[j].DeepCopy()
	}
	moved[i].Object["endpoints"] = []any{map[string]any{"addresses": []any{"10.250.0.1"}}}
	b.Run("contract-one-chunk-rebuilt", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			list := objs
			if n%2 == 1 {
				list = moved
			}
			if v := a.Memory.checkContract(contract.Member{Name: member}, list); len(v) != 0 {
				b.Fatal(v[0])
			}
		}
	})
	b.Run("split", func(b *testing.B) {
		for b.Loop() {
			if fresh, _ := a.Memory.split(desired, time.Now()); len(fresh) != 0 {
				b.Fatalf("%d fresh", len(fresh))
			}
		}
	})
}
