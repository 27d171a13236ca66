// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/fixtures"
)

// scenarioFiles renders a fixture scenario into a commit-like file map.
func scenarioFiles(t testing.TB, name string) (*fixtures.Scenario, map[string][]byte) {
	t.Helper()
	s, err := fixtures.LoadScenario(filepath.Join("..", "fixtures", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	return s, files
}

func TestBuildEveryScenario(t *testing.T) {
	scenarios, err := fixtures.LoadScenarios(filepath.Join("..", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		files, err := s.Render()
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for _, m := range s.Config.Spec.Members {
			objs, err := Build(files, m.Name)
			if err != nil {
				t.Errorf("%s: %v", s.Name, err)
				continue
			}
			var want int
			for p := range files {
				if strings.HasPrefix(p, "clusters/"+m.Name+"/") && !strings.HasSuffix(p, "/kustomization.yaml") {
					want++
				}
			}
			if len(objs) != want {
				t.Errorf("%s/%s: built %d objects, want %d (one per file)", s.Name, m.Name, len(objs), want)
			}
		}
	}
}

// A rendered commit always has every member's directory; one without it
// (the initial commit, another branch) would prune everything.
func TestBuildRefusesACommitWithoutTheMembersDirectory(t *testing.T) {
	_, files := scenarioFiles(t, "single-export")
	objs, err := Build(files, "cluster-z")
	if !errors.Is(err, ErrNoMemberDir) || len(objs) != 0 || !strings.Contains(err.Error(), "clusters/cluster-z/") {
		t.Fatalf("Build of a member without a directory = %d objects, %v; want ErrNoMemberDir naming the directory", len(objs), err)
	}
}

func TestBuildRefuses(t *testing.T) {
	_, base := scenarioFiles(t, "single-export")
	const kust = "clusters/cluster-a/kustomization.yaml"
	clusterRole := []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: evil\nrules: []\n")
	tests := []struct {
		name   string
		change func(files map[string][]byte)
		want   []string // substrings of the error
	}{
		{"cluster role file not even listed", func(f map[string][]byte) {
			f["clusters/cluster-a/shop/evil.yaml"] = clusterRole
		}, []string{"clusters/cluster-a/shop/evil.yaml", "ClusterRole", "allow-list"}},
		{"cluster role listed", func(f map[string][]byte) {
			f["clusters/cluster-a/evil.yaml"] = clusterRole
			f[kust] = append(f[kust], []byte("- evil.yaml\n")...)
		}, []string{"clusters/cluster-a/evil.yaml", "ClusterRole"}},
		{"second document of a file", func(f map[string][]byte) {
			p := "clusters/cluster-a/shop/cart/serviceimport.yaml"
			f[p] = append(append(append([]byte{}, f[p]...), "---\n"...), clusterRole...)
		}, []string{"serviceimport.yaml", "document 2", "ClusterRole"}},
		{"service without namespace", func(f map[string][]byte) {
			f["clusters/cluster-a/x.yaml"] = []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n")
		}, []string{"clusters/cluster-a/x.yaml", "without metadata.namespace"}},
		{"generator in kustomization", func(f map[string][]byte) {
			f[kust] = append(f[kust], []byte("configMapGenerator:\n- name: x\n  literals: [a=b]\n")...)
		}, []string{kust, "configMapGenerator"}},
		{"resource outside the member directory", func(f map[string][]byte) {
			f[kust] = append(f[kust], []byte("- ../cluster-b/shop/cart/serviceimport.yaml\n")...)
		}, []string{kust, "../cluster-b"}},
		{"remote resource", func(f map[string][]byte) {
			f[kust] = append(f[kust], []byte("- https://github.com/example/evil\n")...)
		}, []string{kust, "https://github.com/example/evil"}},
		{"no kustomization", func(f map[string][]byte) {
			delete(f, kust)
		}, []string{kust, "missing"}},
		{"malformed yaml", func(f map[string][]byte) {
			f["clusters/cluster-a/shop/bad.yaml"] = []byte("apiVersion: v1\nkind: [\n")
		}, []string{"clusters/cluster-a/shop/bad.yaml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := maps.Clone(base)
			tc.change(files)
			objs, err := Build(files, "cluster-a")
			if err == nil {
				t.Fatalf("Build succeeded with %d objects; want an error", len(objs))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestBuildIgnoresOtherMembers(t *testing.T) {
	_, files := scenarioFiles(t, "single-export")
	files["clusters/cluster-b/evil.yaml"] = []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: evil\n")
	if _, err := Build(files, "cluster-a"); err != nil {
		t.Fatalf("cluster-a's build must not read cluster-b's directory: %v", err)
	}
	if _, err := Build(files, "cluster-b"); err == nil {
		t.Fatal("cluster-b's build accepted a ClusterRole")
	}
}
