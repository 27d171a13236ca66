// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
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
//
// The resources are built in chunks (build_chunks.go) whose outputs,
// concatenated in order, are what one kustomize run over the whole
// directory gives; Build remembers nothing between calls, a BuildCache
// does.
func Build(files map[string][]byte, member string) ([]*unstructured.Unstructured, error) {
	return (*BuildCache)(nil).Build(files, member)
}

// Build is the package's Build, running kustomize only on the chunks of
// resources whose files changed since the last build through c. A nil
// BuildCache builds everything. The objects returned are shared with the
// cache: callers must not modify them.
func (c *BuildCache) Build(files map[string][]byte, member string) ([]*unstructured.Unstructured, error) {
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
	b := c.begin()
	defer b.end()
	resources, err := b.kustomization(dir+kustomizationFile, kust)
	if err == nil {
		err = checkResources(dir+kustomizationFile, resources, exists)
	}
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", member, err)
	}
	rels := make([]string, 0, len(own))
	for rel := range own {
		if rel != kustomizationFile && isYAML(rel) {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	for _, rel := range rels {
		if err := b.checkFile(dir+rel, own[rel]); err != nil {
			return nil, fmt.Errorf("member %q: %w", member, err)
		}
	}
	objs, err := b.build(dir, own, resources)
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", member, err)
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
