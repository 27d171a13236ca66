// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"path"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// Why chunks: kustomize checks every resource it adds against all it has
// (resWrangler.Append), so one run costs the square of a member's object
// count: 1,000 imported services (about 4,000 objects) took 13.7 s, 30
// times a plain decode of the same files. A kustomization that only lists
// resource files (all parseKustomization allows, and the build runs with
// kustomize's default of no reordering) means the resources in list
// order, each file's objects in file order, no two with the same ID. So
// the list is cut into chunks, each chunk is one kustomize run over a
// kustomization listing just its files, and the outputs are concatenated
// with the ID check done across chunks: the same objects in the same
// order as one run (TestChunkedBuildEqualsOneKustomizeRun), at a cost
// linear in the object count.
//
// Chunk boundaries depend only on the resource names (a chunk ends after
// a name whose hash is 0 modulo chunkSpread, or at maxChunk entries), so
// adding or removing one file changes one chunk and a BuildCache reruns
// kustomize on that chunk only.
const (
	chunkSpread = 32
	maxChunk    = 128
)

// BuildCache remembers, for one member, the objects each chunk of its
// resources built to and which files passed the allow-list check, keyed
// by their names and bytes; what a build did not use is forgotten at its
// end. Safe for concurrent use; builds through one cache run one at a
// time.
type BuildCache struct {
	mu      sync.Mutex
	seed    maphash.Seed
	chunks  map[uint64]builtChunk
	checked map[uint64]bool
	kust    kustomizationMemo
	runs    int
}

// builtChunk is what one chunk built to, and its objects' resourceIDs.
type builtChunk struct {
	objs []*unstructured.Unstructured
	ids  []string
}

// kustomizationMemo is the last kustomization.yaml parsed, by key.
type kustomizationMemo struct {
	key       uint64
	resources []string
	ok        bool
}

// NewBuildCache returns an empty BuildCache.
func NewBuildCache() *BuildCache {
	return &BuildCache{seed: maphash.MakeSeed()}
}

// Runs is how many kustomize runs builds through c have made.
func (c *BuildCache) Runs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

// buildPass is one build through a cache (or none: c nil).
type buildPass struct {
	c       *BuildCache
	chunks  map[uint64]builtChunk
	checked map[uint64]bool
}

func (c *BuildCache) begin() *buildPass {
	if c == nil {
		return &buildPass{}
	}
	c.mu.Lock()
	return &buildPass{c: c, chunks: map[uint64]builtChunk{}, checked: map[uint64]bool{}}
}

// end keeps what this build used and drops the rest.
func (b *buildPass) end() {
	if b.c == nil {
		return
	}
	b.c.chunks, b.c.checked = b.chunks, b.checked
	b.c.mu.Unlock()
}

// key hashes names and contents, each length-prefixed so that no two
// different lists hash the same input.
func (b *buildPass) key(parts ...[]byte) uint64 {
	var h maphash.Hash
	h.SetSeed(b.c.seed)
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum64()
}

// kustomization is parseKustomization, remembered for the same name and
// bytes (a failed parse is not remembered).
func (b *buildPass) kustomization(name string, data []byte) ([]string, error) {
	if b.c == nil {
		return parseKustomization(name, data)
	}
	k := b.key([]byte(name), data)
	if m := b.c.kust; m.ok && m.key == k {
		return m.resources, nil
	}
	resources, err := parseKustomization(name, data)
	if err != nil {
		return nil, err
	}
	b.c.kust = kustomizationMemo{key: k, resources: resources, ok: true}
	return resources, nil
}

func (b *buildPass) checkFile(name string, data []byte) error {
	if b.c == nil {
		return checkFile(name, data)
	}
	k := b.key([]byte(name), data)
	if b.c.checked[k] {
		b.checked[k] = true
		return nil
	}
	if err := checkFile(name, data); err != nil {
		return err
	}
	b.checked[k] = true
	return nil
}

// build builds resources (entries of dir's kustomization, relative to
// dir, each a file in own) chunk by chunk.
func (b *buildPass) build(dir string, own map[string][]byte, resources []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, chunk := range chunkResources(resources) {
		built, err := b.chunk(dir, own, chunk)
		if err != nil {
			return nil, err
		}
		for _, id := range built.ids {
			if seen[id] {
				return nil, fmt.Errorf("kustomize build %s: may not add resource with an already registered id: %s", dir, id)
			}
			seen[id] = true
		}
		out = append(out, built.objs...)
	}
	return out, nil
}

// chunkResources cuts resources into chunks at name-derived boundaries.
func chunkResources(resources []string) [][]string {
	var chunks [][]string
	start := 0
	for i, r := range resources {
		h := fnv.New32a()
		h.Write([]byte(r))
		if h.Sum32()%chunkSpread == 0 || i+1-start == maxChunk || i == len(resources)-1 {
			chunks = append(chunks, resources[start:i+1])
			start = i + 1
		}
	}
	return chunks
}

// chunk is the objects of one chunk: remembered, or one kustomize run.
func (b *buildPass) chunk(dir string, own map[string][]byte, entries []string) (builtChunk, error) {
	var k uint64
	if b.c != nil {
		parts := make([][]byte, 0, 2*len(entries))
		for _, e := range entries {
			parts = append(parts, []byte(e), own[path.Clean(e)])
		}
		k = b.key(parts...)
		if built, ok := b.c.chunks[k]; ok {
			b.chunks[k] = built
			return built, nil
		}
		b.c.runs++
	}
	objs, err := kustomizeRun(dir, own, entries)
	if err != nil {
		return builtChunk{}, err
	}
	built := builtChunk{objs: objs, ids: make([]string, len(objs))}
	for i, o := range objs {
		built.ids[i] = resourceID(o)
	}
	if b.c != nil {
		b.chunks[k] = built
	}
	return built, nil
}

// kustomizeRun builds a kustomization listing entries over an in-memory
// copy of their files, laid out as in dir so errors name the same paths.
func kustomizeRun(dir string, own map[string][]byte, entries []string) ([]*unstructured.Unstructured, error) {
	fs := filesys.MakeFsInMemory()
	root := "/" + strings.TrimSuffix(dir, "/")
	for _, e := range entries {
		rel := path.Clean(e)
		if err := fs.WriteFile(path.Join(root, rel), own[rel]); err != nil {
			return nil, fmt.Errorf("staging %s%s: %w", dir, rel, err)
		}
	}
	kust, err := yaml.Marshal(map[string]any{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": entries})
	if err != nil {
		return nil, err
	}
	if err := fs.WriteFile(path.Join(root, kustomizationFile), kust); err != nil {
		return nil, fmt.Errorf("staging %s%s: %w", dir, kustomizationFile, err)
	}
	kustomizeMu.Lock()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, root)
	kustomizeMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	objs := make([]*unstructured.Unstructured, 0, resources.Size())
	for _, r := range resources.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", r.CurId(), err)
		}
		if err := contract.CheckKind(u.GetAPIVersion(), u.GetKind(), u.GetNamespace()); err != nil {
			return nil, fmt.Errorf("kustomize output %s: %w", describe(u), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// resourceID is kustomize's identity of a built object: group, version,
// kind, namespace and name.
func resourceID(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	return gvk.Group + "_" + gvk.Version + "_" + gvk.Kind + "|" + u.GetNamespace() + "|" + u.GetName()
}
