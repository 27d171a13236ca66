// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// clustersDir is the prefix of the rendered per-cluster trees inside a
// fixture archive; everything else (inputs, config, reports) is not applied.
const clustersDir = "clusters/"

// errNoFixtures is returned when a directory holds no rendered cluster tree,
// so that an empty or misplaced fixtures directory fails instead of passing
// vacuously.
var errNoFixtures = errors.New("no fixture has a clusters/<member>/ directory")

// member is one rendered cluster directory taken from one fixture archive.
type member struct {
	fixture string // archive name without .txtar
	archive string // path of the archive, for messages
	name    string
	// files maps paths relative to clusters/<name>/ to their contents.
	files map[string][]byte
}

func (m member) String() string { return m.fixture + "/" + clustersDir + m.name }

// repoRoot walks up from the working directory to the one holding go.mod, so
// the test finds fixtures/ whichever package directory `go test` runs it in.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// readMembers returns every clusters/<member>/ tree of every *.txtar in dir,
// sorted by fixture then member name, or errNoFixtures if there are none.
func readMembers(dir string) ([]member, error) {
	archives, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, fmt.Errorf("listing fixtures in %s: %w", dir, err)
	}
	slices.Sort(archives)
	var out []member
	for _, a := range archives {
		ms, err := readArchive(a)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s (%d *.txtar files): %w", dir, len(archives), errNoFixtures)
	}
	return out, nil
}

func readArchive(file string) ([]member, error) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", file, err)
	}
	fixture := strings.TrimSuffix(filepath.Base(file), ".txtar")
	byName := map[string]*member{}
	for _, f := range ar.Files {
		rest, ok := strings.CutPrefix(path.Clean(f.Name), clustersDir)
		if !ok {
			continue
		}
		name, rel, ok := strings.Cut(rest, "/")
		if !ok || name == "" || rel == "" {
			// A file directly under clusters/ belongs to no member.
			continue
		}
		m := byName[name]
		if m == nil {
			m = &member{fixture: fixture, archive: file, name: name, files: map[string][]byte{}}
			byName[name] = m
		}
		if _, dup := m.files[rel]; dup {
			return nil, fmt.Errorf("fixture %s: %s%s/%s appears twice", file, clustersDir, name, rel)
		}
		m.files[rel] = f.Data
	}
	out := make([]member, 0, len(byName))
	for _, m := range byName {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b member) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// kustomizeMu serialises builds: kustomize keeps package-level state and is
// not safe to run concurrently.
var kustomizeMu sync.Mutex

// build runs `kustomize build clusters/<member>` over an in-memory copy of the
// member's files, exactly what Flux or Argo CD would do with the directory.
func (m member) build() ([]*unstructured.Unstructured, error) {
	fs := filesys.MakeFsInMemory()
	root := "/" + clustersDir + m.name
	for rel, data := range m.files {
		if err := fs.WriteFile(path.Join(root, rel), data); err != nil {
			return nil, fmt.Errorf("%s: staging %s: %w", m, rel, err)
		}
	}
	kustomizeMu.Lock()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, root)
	kustomizeMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: kustomize build: %w", m, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s: encoding %s: %w", m, r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: decoding %s: %w", m, r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// check builds the member, creates the namespaces its objects use, and
// dry-run applies every object, returning how many objects it applied.
func (m member) check(ctx context.Context, c client.Client) (int, error) {
	objs, err := m.build()
	if err != nil {
		return 0, err
	}
	if err := envtest.EnsureNamespaces(ctx, c, envtest.Namespaces(objs)...); err != nil {
		return 0, fmt.Errorf("%s: %w", m, err)
	}
	if err := ensureUserGateways(ctx, c, objs); err != nil {
		return 0, fmt.Errorf("%s: %w", m, err)
	}
	if err := envtest.ServerSideApply(ctx, c, objs, true); err != nil {
		return 0, fmt.Errorf("%s (from %s): %w", m, m.archive, err)
	}
	return len(objs), nil
}

// ensureUserGateways creates, for every Gateway among objs, the Gateway a
// user makes for gateway mode (docs/gateway-mode.md: a class and an HTTP
// listener) when there is none: a rendered Gateway is only the listeners
// to merge into it, which the apiserver judges merged into a whole one.
func ensureUserGateways(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GetAPIVersion() != "gateway.networking.k8s.io/v1" || o.GetKind() != "Gateway" {
			continue
		}
		gw := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": o.GetAPIVersion(), "kind": "Gateway",
			"metadata": map[string]any{"namespace": o.GetNamespace(), "name": o.GetName()},
			"spec": map[string]any{"gatewayClassName": "users-class", "listeners": []any{map[string]any{
				"name": "http", "protocol": "HTTP", "port": int64(80), "allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
			}}},
		}}
		if err := c.Create(ctx, gw); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the user's Gateway %s/%s: %w", o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// runMembers checks each member in a subtest named fixture/member, on cluster
// (index of the member within its fixture) mod len(clusters), so that members
// of one fixture land on different apiservers as they would in real life.
func runMembers(t *testing.T, members []member, clusters []*envtest.Cluster) {
	t.Helper()
	byFixture := map[string][]member{}
	var fixtures []string
	for _, m := range members {
		if _, seen := byFixture[m.fixture]; !seen {
			fixtures = append(fixtures, m.fixture)
		}
		byFixture[m.fixture] = append(byFixture[m.fixture], m)
	}
	for _, f := range fixtures {
		t.Run(f, func(t *testing.T) {
			for i, m := range byFixture[f] {
				cl := clusters[i%len(clusters)]
				t.Run(m.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
					defer cancel()
					n, err := m.check(ctx, cl.Client)
					if err != nil {
						t.Fatalf("cluster %q rejected the rendered output: %v", cl.Name, err)
					}
					t.Logf("cluster %q accepted %d objects (dry-run)", cl.Name, n)
				})
			}
		})
	}
}
