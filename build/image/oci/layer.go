// SPDX-License-Identifier: Apache-2.0

package oci

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is one file or directory of the layer. A name ending in / is a
// directory.
type entry struct {
	name string
	mode int64
	uid  int
	body []byte
}

// rootFS is the image's whole file system, in name order, parents first,
// as unpacking expects and a reproducible tar needs. The user's entries are all a
// program asking "who am I" needs; its shell refuses logins. /tmp and the
// work directory belong to the user so they are writable even without the
// volumes deploy mounts over them.
func rootFS(binary, caCerts []byte) []entry {
	user := fmt.Sprintf("nonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", User, User, Workdir)
	group := fmt.Sprintf("nonroot:x:%d:\n", User)
	return []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, body: []byte(group)},
		{name: "etc/passwd", mode: 0o644, body: []byte(user)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: strings.TrimPrefix(CACertsPath, "/"), mode: 0o644, body: caCerts},
		{name: strings.TrimPrefix(Entrypoint, "/"), mode: 0o755, body: binary},
		{name: "tmp/", mode: 0o1777, uid: User},
		{name: "var/", mode: 0o755},
		{name: "var/lib/", mode: 0o755},
		{name: strings.TrimPrefix(Workdir, "/") + "/", mode: 0o755, uid: User},
	}
}

// newLayer writes the entries as a tar in their order, every one dated
// created and owned by root unless said otherwise, so the same entries
// always give the same bytes.
func newLayer(entries []entry, created time.Time) (v1.Layer, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: created}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	data := b.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return layer, nil
}
