// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures"
	"github.com/mcs-gitops/mcs-gitops/internal/yamlfast"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// FuzzRenderedObjectsPassAPIServerValidation feeds arbitrary snapshots for
// one member of the demo ClusterSet (made to mix the data paths) to the
// renderer and server-side applies (dry run) what it renders for each
// member to that member's own kube-apiserver, one IPv4-only, one IPv6-only
// and one dual-stack: whatever input the snapshot loader accepts, the
// renderer must only ever produce objects the member's own validation
// accepts. Under plain `go test` it runs the
// seeds (every fixture's inputs); `make fuzz` explores further.
func FuzzRenderedObjectsPassAPIServerValidation(f *testing.F) {
	root, err := repoRoot()
	if err != nil {
		f.Fatal(err)
	}
	demo := filepath.Join(root, "fixtures", "demo")
	cfg, err := v1alpha1.LoadFile(filepath.Join(demo, "clusterset.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	// cluster-1, the fuzzed member, is in gateway mode, so its exports
	// render routes and listeners and its policies may render weighted
	// routes on its gateway; cluster-2 has a gateway and cluster-3 a mesh,
	// so the other data paths are rendered too.
	for i, m := range cfg.Spec.Members {
		gw := &v1alpha1.Gateway{Host: "192.0.2.1", Port: 80, Namespace: "mcs-gateway", Name: "east-west",
			TCPPorts: &v1alpha1.PortRange{From: 30000, To: 30019}}
		switch i {
		case 0:
			m.Mode, m.Gateway = v1alpha1.ModeGateway, gw
		case 1:
			gw.Host = "2001:db8::2"
			m.Gateway = gw
		case 2:
			m.Mesh = true
		}
		cfg.Spec.Members[i] = m
	}
	stacks := []envtest.Stack{envtest.IPv4Only, envtest.IPv6Only, envtest.DualStack}
	others := map[string]*snapshot.Snapshot{}
	for _, m := range []string{"cluster-2", "cluster-3"} {
		b, err := os.ReadFile(filepath.Join(demo, "inputs", m+".yaml"))
		if err != nil {
			f.Fatal(err)
		}
		if others[m], err = snapshot.Parse(m, m+".yaml", b); err != nil {
			f.Fatal(err)
		}
	}
	others["cluster-2"].ServiceCIDRs = stackCIDRs(envtest.IPv6Only)
	others["cluster-3"].ServiceCIDRs = stackCIDRs(envtest.DualStack)
	scenarios, err := fixtures.LoadScenarios(filepath.Join(root, "fixtures"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range scenarios {
		for _, in := range s.Inputs() {
			f.Add(in)
		}
	}

	members := envtest.StartStacks(f, stacks...)
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, err := snapshot.Parse("cluster-1", "cluster-1.yaml", data)
		if err != nil {
			return
		}
		// What the member's apiserver has, whatever the input claims.
		snap.ServiceCIDRs = stackCIDRs(envtest.IPv4Only)
		out, err := render.Render(cfg, []*snapshot.Snapshot{snap, others["cluster-2"], others["cluster-3"]}, nil)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i, m := range out.Members {
			var objs []*unstructured.Unstructured
			for _, o := range m.Objects {
				b, err := yamlfast.Marshal(o.Object)
				if err != nil {
					t.Fatalf("%s: %v", o.Path, err)
				}
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(b, &u.Object); err != nil {
					t.Fatalf("%s: rendered YAML does not parse: %v", o.Path, err)
				}
				objs = append(objs, u)
			}
			if len(objs) == 0 {
				continue
			}
			cluster := members[i]
			if err := envtest.EnsureNamespaces(ctx, cluster.Client, envtest.Namespaces(objs)...); err != nil {
				t.Fatal(err)
			}
			if err := envtest.ServerSideApply(ctx, cluster.Client, objs, true); err != nil {
				t.Fatalf("%s (%s) rejects what was rendered for it, for input:\n%s\nerror: %v", m.Name, stacks[i], strings.TrimSpace(string(data)), err)
			}
		}
	})
}

// stackCIDRs are the ServiceCIDRs a member started with stack reports.
func stackCIDRs(stack envtest.Stack) []networkingv1.ServiceCIDR {
	return []networkingv1.ServiceCIDR{{ObjectMeta: metav1.ObjectMeta{Name: snapshot.DefaultServiceCIDR},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: strings.Split(stack.ServiceCIDRs(), ",")}}}
}
