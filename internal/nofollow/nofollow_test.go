// SPDX-License-Identifier: Apache-2.0

package nofollow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadUnder(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "f"), []byte("secret"), 0o600))
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "real"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "real", "f"), []byte("ok"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "dirlink")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "f"), filepath.Join(root, "real", "filelink")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "real", "pipe"), 0o644))

	b, err := ReadUnder(root, "real/f")
	require.NoError(t, err)
	assert.Equal(t, "ok", string(b))

	for rel, kind := range map[string]string{
		"dirlink/f":     "symbolic link",
		"real/filelink": "symbolic link",
		"real/pipe":     "named pipe",
	} {
		_, err := ReadUnder(root, rel)
		var u *UnsafeError
		require.True(t, errors.As(err, &u), "%s: %v", rel, err)
		assert.Equal(t, kind, u.Kind, rel)
	}

	_, err = ReadUnder(root, "missing/f")
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	_, err = ReadUnder(root, "../x/f")
	assert.ErrorContains(t, err, "may not contain ..")
}
