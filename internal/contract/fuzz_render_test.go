// SPDX-License-Identifier: Apache-2.0

package contract_test

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// FuzzRenderedIsInsideTheContract: whatever members export, everything the
// renderer writes for a member is inside that member's contract, so the
// applier never refuses rendered output. The fixtures prove it for the
// scenarios people wrote; this proves it for inputs nobody thought of.
func FuzzRenderedIsInsideTheContract(f *testing.F) {
	for _, ar := range fixtureArchives(f) {
		var in [][]byte
		for _, file := range ar.Files {
			if strings.HasPrefix(file.Name, "inputs/") && len(in) < 2 && len(file.Data) <= maxFuzzInput {
				in = append(in, file.Data)
			}
		}
		if len(in) == 2 {
			f.Add(in[0], in[1], byte(0))
			f.Add(in[0], in[1], byte(3))
			f.Add(in[0], in[1], byte(13))
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte, opts byte) {
		if len(a)+len(b) > 2*maxFuzzInput {
			return
		}
		names := []string{"cluster-a", "cluster-b"}
		var snaps []*snapshot.Snapshot
		for i, data := range [][]byte{a, b} {
			s, err := snapshot.Parse(names[i], names[i]+".yaml", data)
			if err != nil {
				return
			}
			snaps = append(snaps, s)
		}
		cfg := &v1alpha1.ClusterSet{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind, Metadata: v1alpha1.Metadata{Name: "fuzz"}}
		for i, n := range names {
			m := v1alpha1.Member{Name: n}
			if opts&1 != 0 {
				m.Gateway = &v1alpha1.Gateway{Host: "192.0.2.1", Namespace: "gw", Name: "east-west",
					TCPPorts: &v1alpha1.PortRange{From: 30000, To: 30003}}
				if i == 1 && opts&4 != 0 {
					m.Mode = v1alpha1.ModeGateway
				}
				if opts&8 != 0 {
					m.Gateway.TCPListeners = v1alpha1.TCPListenersGateway
				}
			}
			cfg.Spec.Members = append(cfg.Spec.Members, m)
		}
		cfg.Spec.Render.CreateMissingNamespaces = opts&2 != 0
		cfg.Default()
		out, err := render.Render(cfg, snaps, nil)
		if err != nil {
			return
		}
		files, err := layout.Files(out)
		if err != nil {
			t.Fatalf("Files: %v", err)
		}
		for i := range cfg.Spec.Members {
			m := &cfg.Spec.Members[i]
			var objs []*unstructured.Unstructured
			for p, data := range files {
				rest, ok := strings.CutPrefix(p, layout.ClustersDir+"/"+m.Name+"/")
				if !ok || rest == "kustomization.yaml" {
					continue
				}
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(bytes.TrimSpace(data), &u.Object); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				objs = append(objs, u)
			}
			for _, v := range contract.Check(contract.MemberOf(cfg, m), objs) {
				t.Errorf("%s: rendered but outside the contract: %s", m.Name, v)
			}
		}
	})
}
