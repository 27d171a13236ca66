package apply

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/mcs-gitops/mcs-gitops/layout"
)

// kustomizeMu serializes builds: kustomize keeps package-level state and is
// not safe to run concurrently.
var kustomizeMu sync.Mutex

const kustomizationFile = "kustomization.yaml"

// ErrNoMemberDir means the commit has no directory for a member: the
// initial commit, another branch, a repository that is not a rendered one.
// Applying it would prune every import mcs-gitops made there, so it is
// refused unless the Applier allows it (apply --ref --allow-empty).
var ErrNoMemberDir = errors.New("applying it would prune every object mcs-gitops applied in that member; pass --allow-empty to do so")

// Build runs `kustomize build clusters/<member>/` over the files of one
// commit (keys relative to the repository sub-path, e.g.
// "clusters/cluster-1/kustomization.yaml") held in memory, never the
// worktree. Before building, the member's kustomization.yaml may only list
// files of the member directory, and every other YAML file there must hold
// allow-listed kinds; the output is checked again. A commit without the
// member's directory is ErrNoMemberDir: a rendered commit always has one,
// even when the member imports nothing.
func Build(files map[string][]byte, member string) ([]*unstructured.Unstructured, error) {
	if member == "" || strings.ContainsAny(member, "/\\") || member == "." || member == ".." {
		return nil, fmt.Errorf("member %q: not a valid directory name", member)
	}
	dir := layout.MemberDir(member)
	own := map[string][]byte{}
	for p, data := range files {
		if rel, ok := strings.CutPrefix(p, dir); ok {
			own[rel] = data
		}
	}
	if len(own) == 0 {
		return nil, fmt.Errorf("member %q: the commit has no %s: %w", member, dir, ErrNoMemberDir)
	}

	kust, ok := own[kustomizationFile]
	if !ok {
		return nil, fmt.Errorf("member %q: %s%s is missing", member, dir, kustomizationFile)
	}
	exists := func(rel string) bool {
		if strings.Contains(rel, "://") || path.IsAbs(rel) {
			return false
		}
		c := path.Clean(rel)
		if c == ".." || strings.HasPrefix(c, "../") || c == kustomizationFile {
			return false
		}
		_, ok := own[c]
		return ok && isYAML(c) // other files are never checked, so never built
	}
	if err := checkKustomization(dir+kustomizationFile, kust, exists); err != nil {
		return nil, fmt.Errorf("member %q: %w", member, err)
	}
	rels := make([]string, 0, len(own))
	for rel := range own {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	for _, rel := range rels {
		if rel == kustomizationFile || !isYAML(rel) {
			continue
		}
		if err := checkFile(dir+rel, own[rel]); err != nil {
			return nil, fmt.Errorf("member %q: %w", member, err)
		}
	}

	fs := filesys.MakeFsInMemory()
	root := "/" + strings.TrimSuffix(dir, "/")
	for _, rel := range rels {
		if err := fs.WriteFile(path.Join(root, rel), own[rel]); err != nil {
			return nil, fmt.Errorf("member %q: staging %s%s: %w", member, dir, rel, err)
		}
	}
	kustomizeMu.Lock()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, root)
	kustomizeMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("member %q: kustomize build %s: %w", member, dir, err)
	}

	objs := make([]*unstructured.Unstructured, 0, resources.Size())
	for _, r := range resources.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("member %q: encoding %s: %w", member, r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("member %q: decoding %s: %w", member, r.CurId(), err)
		}
		if err := checkKind(u.GetAPIVersion(), u.GetKind(), u.GetNamespace()); err != nil {
			return nil, fmt.Errorf("member %q: kustomize output %s: %w", member, describe(u), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

func isYAML(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".json")
}

// describe names an object as "Kind/namespace/name" (or "Kind/name" when
// cluster-scoped), the form Result lists use.
func describe(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return u.GetKind() + "/" + ns + "/" + u.GetName()
	}
	return u.GetKind() + "/" + u.GetName()
}
