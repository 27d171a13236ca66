// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"encoding/json"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/fixtures"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// oneRun is `kustomize build clusters/<member>/` as one kustomize run over
// the whole directory, what Build did before it built in chunks.
func oneRun(t testing.TB, files map[string][]byte, member string) []string {
	t.Helper()
	dir := layout.MemberDir(member)
	fs := filesys.MakeFsInMemory()
	for p, data := range files {
		if strings.HasPrefix(p, dir) {
			require.NoError(t, fs.WriteFile("/"+p, data))
		}
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/"+strings.TrimSuffix(dir, "/"))
	require.NoError(t, err)
	var out []string
	for _, r := range res.Resources() {
		data, err := r.MarshalJSON()
		require.NoError(t, err)
		out = append(out, string(data))
	}
	return out
}

func asJSON(t testing.TB, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		data, err := json.Marshal(o.Object)
		require.NoError(t, err)
		out = append(out, string(data))
	}
	return out
}

// Chunks concatenated are one run: the same objects, byte for byte, in
// the same order, for every scenario and for a generated member large
// enough to have many chunks.
func TestChunkedBuildEqualsOneKustomizeRun(t *testing.T) {
	scenarios, err := fixtures.LoadScenarios(filepath.Join("..", "fixtures"))
	require.NoError(t, err)
	type world struct {
		name    string
		files   map[string][]byte
		members []string
	}
	var worlds []world
	for _, s := range scenarios {
		files, err := s.Render()
		require.NoError(t, err, s.Name)
		var members []string
		for _, m := range s.Config.Spec.Members {
			members = append(members, m.Name)
		}
		worlds = append(worlds, world{s.Name, files, members})
	}
	files, member := memberFiles(t, 150)
	worlds = append(worlds, world{"generated-150", files, []string{member}})

	for _, w := range worlds {
		for _, m := range w.members {
			if _, ok := w.files[layout.MemberDir(m)+kustomizationFile]; !ok {
				continue
			}
			objs, err := Build(w.files, m)
			require.NoError(t, err, "%s/%s", w.name, m)
			assert.Equal(t, oneRun(t, w.files, m), asJSON(t, objs), "%s/%s", w.name, m)
		}
	}
	resources := kustomizationResources(t, files, member)
	assert.Greater(t, len(chunkResources(resources)), 10, "the generated member is cut into many chunks")
}

func kustomizationResources(t testing.TB, files map[string][]byte, member string) []string {
	t.Helper()
	var k struct{ Resources []string }
	require.NoError(t, yaml.Unmarshal(files[layout.MemberDir(member)+kustomizationFile], &k))
	return k.Resources
}

// A build through a cache runs kustomize on the chunks whose files
// changed, and gives what a build from nothing gives.
func TestBuildCacheRebuildsOnlyWhatChanged(t *testing.T) {
	files, member := memberFiles(t, 150)
	dir := layout.MemberDir(member)
	resources := kustomizationResources(t, files, member)
	chunks := len(chunkResources(resources))
	c := NewBuildCache()

	first, err := c.Build(files, member)
	require.NoError(t, err)
	require.Equal(t, chunks, c.Runs(), "a first build runs every chunk")

	again, err := c.Build(maps.Clone(files), member)
	require.NoError(t, err)
	assert.Equal(t, asJSON(t, first), asJSON(t, again))
	assert.Equal(t, chunks, c.Runs(), "nothing changed: no kustomize run")

	// One endpoint moves.
	changed := maps.Clone(files)
	i := slices.IndexFunc(resources[len(resources)/2:], func(r string) bool { return strings.Contains(string(files[dir+r]), "addresses:") })
	require.GreaterOrEqual(t, i, 0)
	slice := dir + resources[len(resources)/2+i]
	require.Contains(t, string(changed[slice]), "10.")
	changed[slice] = []byte(strings.Replace(string(changed[slice]), "10.", "11.", 1))
	got, err := c.Build(changed, member)
	require.NoError(t, err)
	assert.Equal(t, chunks+1, c.Runs(), "one file changed: one chunk rebuilt")
	assert.Equal(t, oneRun(t, changed, member), asJSON(t, got))

	// One file leaves the kustomization: its chunk shrinks, the rest is
	// remembered.
	removed := maps.Clone(changed)
	gone := resources[10]
	delete(removed, dir+gone)
	removed[dir+kustomizationFile] = mustYAML(t, map[string]any{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
		"resources": slices.DeleteFunc(slices.Clone(resources), func(r string) bool { return r == gone })})
	got, err = c.Build(removed, member)
	require.NoError(t, err)
	assert.Equal(t, chunks+2, c.Runs(), "one file removed: one chunk rebuilt")
	assert.Equal(t, oneRun(t, removed, member), asJSON(t, got))

	// Back to the start: the chunks of the first build were forgotten
	// when a build stopped using them, and are built again.
	got, err = c.Build(files, member)
	require.NoError(t, err)
	assert.Equal(t, chunks+4, c.Runs())
	assert.Equal(t, asJSON(t, first), asJSON(t, got))
}

func mustYAML(t testing.TB, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	require.NoError(t, err)
	return b
}

// Two resources with one ID are an error whether they land in one chunk
// or in two, as they are for one kustomize run.
func TestBuildRefusesOneIDTwice(t *testing.T) {
	files, member := memberFiles(t, 150)
	dir := layout.MemberDir(member)
	resources := kustomizationResources(t, files, member)
	chunks := chunkResources(resources)
	require.Greater(t, len(chunks), 2)
	for name, pair := range map[string][2]string{
		"same chunk":   {chunks[0][0], chunks[0][len(chunks[0])-1]},
		"two chunks":   {chunks[0][0], chunks[len(chunks)-1][0]},
		"listed twice": {chunks[1][0], ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := maps.Clone(files)
			list := slices.Clone(resources)
			if pair[1] == "" {
				list = append(list, pair[0])
			} else {
				f[dir+pair[1]] = f[dir+pair[0]]
			}
			f[dir+kustomizationFile] = mustYAML(t, map[string]any{"resources": list})
			_, err := Build(f, member)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "already registered id")
			assert.Contains(t, err.Error(), path.Clean(dir))
		})
	}
}
