// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LastChanged names, per path, the newest commit that added, changed or
// deleted it, and leaves out a path no commit within the depth touched.
func TestLastChanged(t *testing.T) {
	r := open(t, bareRemote(t))
	first, _, err := r.Commit(rendered(), treeRoots, StaticMessage("first\n\nbody\n"))
	require.NoError(t, err)
	files := rendered()
	files["status/web/db.yaml"] = []byte("namespace: web\nname: db\n")
	second, _, err := r.Commit(files, treeRoots, StaticMessage("second\n"))
	require.NoError(t, err)
	files = maps.Clone(files)
	delete(files, "status/web/db.yaml")
	files["status/SUMMARY.md"] = []byte("third\n")
	third, _, err := r.Commit(files, treeRoots, StaticMessage("third\n"))
	require.NoError(t, err)

	got, err := r.LastChanged(third, []string{"status/web/api.yaml", "status/web/db.yaml", "status/SUMMARY.md", "status/none.yaml"}, 10)
	require.NoError(t, err)
	assert.Equal(t, first.String(), got["status/web/api.yaml"].Hash)
	assert.Equal(t, "first", got["status/web/api.yaml"].Subject)
	assert.Equal(t, third.String(), got["status/web/db.yaml"].Hash, "a deletion is a change")
	assert.Equal(t, third.String(), got["status/SUMMARY.md"].Hash)
	assert.NotContains(t, got, "status/none.yaml")

	got, err = r.LastChanged(second, []string{"status/web/api.yaml", "status/web/db.yaml"}, 1)
	require.NoError(t, err)
	assert.Equal(t, second.String(), got["status/web/db.yaml"].Hash)
	assert.NotContains(t, got, "status/web/api.yaml", "beyond the depth")

	info, err := r.Info(third)
	require.NoError(t, err)
	assert.Equal(t, "third", info.Subject)
	assert.NotEmpty(t, info.Author)
}
