// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Every embedded set decodes, and together the sets hold exactly what the
// member-rbac kustomizations build: join installs what kubectl -k would.
func TestSetsMatchKustomizations(t *testing.T) {
	var sets []string
	for _, s := range [][]string{MemberRole, CreateNamespaces, AdmissionPolicy, CoreDNS} {
		sets = append(sets, s...)
	}
	got, err := Objects(sets...)
	require.NoError(t, err)
	var names []string
	for _, o := range got {
		names = append(names, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	var want []string
	for _, dir := range []string{"member-rbac", "member-rbac/create-namespaces", "member-rbac/admission-policy", "member-rbac/coredns"} {
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
		require.NoError(t, err, dir)
		for _, r := range res.Resources() {
			want = append(want, r.GetKind()+"/"+r.GetNamespace()+"/"+r.GetName())
		}
	}
	slices.Sort(names)
	slices.Sort(want)
	assert.Equal(t, want, names)
}

// A YAML file added to member-rbac without a set would be embedded but
// never installed by join.
func TestEveryEmbeddedFileIsInASet(t *testing.T) {
	all := slices.Concat(MemberRole, CreateNamespaces, AdmissionPolicy, CoreDNS)
	require.NoError(t, fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) == "kustomization.yaml" {
			return err
		}
		assert.Contains(t, all, p)
		return nil
	}))
}

func TestObjectsNamesTheMissingFile(t *testing.T) {
	_, err := Objects("member-rbac/nope.yaml")
	assert.ErrorContains(t, err, "member-rbac/nope.yaml")
}
