// SPDX-License-Identifier: Apache-2.0

package oci

import (
	"archive/tar"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"debug/buildinfo"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	info "github.com/mcs-gitops/mcs-gitops/internal/buildinfo"
)

// TestImage builds mcs-gitops as make image does, packages it twice, and
// checks what a container runtime would see: the config, the files, the
// same digest both times, the outputs readable as images, and the binary
// taken out of the layer running.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcs-gitops")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "mcs-gitops")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=auto",
		"-ldflags", "-s -w -X github.com/mcs-gitops/mcs-gitops/internal/buildinfo.version=v0.0.0-imagetest",
		"-o", binary, "github.com/mcs-gitops/mcs-gitops/cmd/mcs-gitops")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	bi, err := buildinfo.ReadFile(binary)
	require.NoError(t, err)
	built := info.From(bi)

	certs := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(certs, selfSignedPEM(t), 0o644))
	created := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	in := Inputs{Binary: binary, CACerts: certs, Version: "v0.0.0-imagetest", Created: created}
	img, err := Build(in)
	require.NoError(t, err)
	again, err := Build(in)
	require.NoError(t, err)
	digest, err := img.Digest()
	require.NoError(t, err)
	assert.Equal(t, digest, mustDigest(t, again), "the same inputs give the same digest")

	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532", cf.Config.User)
	assert.Equal(t, []string{"/mcs-gitops"}, cf.Config.Entrypoint)
	assert.Equal(t, "/var/lib/mcs-gitops", cf.Config.WorkingDir)
	assert.Equal(t, "linux", cf.OS)
	assert.Equal(t, runtime.GOARCH, cf.Architecture)
	assert.Equal(t, created, cf.Created.Time)
	assert.Equal(t, "v0.0.0-imagetest", cf.Config.Labels["org.opencontainers.image.version"])
	assert.Equal(t, "2025-06-01T12:00:00Z", cf.Config.Labels["org.opencontainers.image.created"])
	assert.Equal(t, "https://github.com/mcs-gitops/mcs-gitops", cf.Config.Labels["org.opencontainers.image.source"])
	assert.Equal(t, built.Revision, cf.Config.Labels["org.opencontainers.image.revision"])
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		assert.Equal(t, string(bytes.TrimSpace(head)), cf.Config.Labels["org.opencontainers.image.revision"], "built in a checkout: its revision")
	}

	names, files := layerFiles(t, img)
	for _, f := range files {
		assert.Equal(t, created, f.ModTime.UTC(), "%s is dated by the commit, not the clock", f.Name)
	}
	assert.Equal(t, []string{"etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt",
		"mcs-gitops", "tmp/", "var/", "var/lib/", "var/lib/mcs-gitops/"}, names, "sorted, nothing else")
	assert.Contains(t, string(files["etc/passwd"].body), "nonroot:x:65532:65532:nonroot:/var/lib/mcs-gitops:")
	assert.Contains(t, string(files["etc/group"].body), "nonroot:x:65532:")
	assert.Equal(t, mustRead(t, certs), files["etc/ssl/certs/ca-certificates.crt"].body)
	assert.EqualValues(t, 0o755, files["mcs-gitops"].Mode)
	for _, d := range []string{"tmp/", "var/lib/mcs-gitops/"} {
		assert.Equal(t, 65532, files[d].Uid, "%s is the user's", d)
	}
	assert.Equal(t, 0, files["mcs-gitops"].Uid, "the binary is root's: the user cannot replace it")

	// What make image writes: a tarball and a layout, both the same image,
	// byte for byte the same when written again.
	ref, err := name.NewTag("mcs-gitops:v0.0.0-imagetest")
	require.NoError(t, err)
	o, err := Write(img, ref, filepath.Join(dir, "out"))
	require.NoError(t, err)
	o2, err := Write(again, ref, filepath.Join(dir, "out2"))
	require.NoError(t, err)
	assert.Equal(t, mustRead(t, o.Tarball), mustRead(t, o2.Tarball))
	fromTar, err := tarball.ImageFromPath(o.Tarball, &ref)
	require.NoError(t, err)
	require.NoError(t, validate.Image(fromTar))
	// A docker tarball keeps no manifest (a push of it makes one with
	// Docker media types); what docker load keeps is the config, whose
	// digest is the image ID, and the layer.
	assert.Equal(t, mustConfigName(t, img), mustConfigName(t, fromTar))
	assert.Equal(t, layerDigests(t, img), layerDigests(t, fromTar))
	// Written over another build, the layout holds this image alone: its
	// manifest, config and layer.
	other, err := Build(Inputs{Binary: binary, CACerts: certs, Version: "v0.0.0-other", Created: created})
	require.NoError(t, err)
	_, err = Write(other, ref, filepath.Join(dir, "out"))
	require.NoError(t, err)
	_, err = Write(img, ref, filepath.Join(dir, "out"))
	require.NoError(t, err)
	blobs, err := os.ReadDir(filepath.Join(o.Layout, "blobs", "sha256"))
	require.NoError(t, err)
	assert.Len(t, blobs, 3)
	idx, err := layout.ImageIndexFromPath(o.Layout)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 1)
	assert.Equal(t, "v0.0.0-imagetest", im.Manifests[0].Annotations["org.opencontainers.image.ref.name"])
	fromLayout, err := idx.Image(im.Manifests[0].Digest)
	require.NoError(t, err)
	require.NoError(t, validate.Image(fromLayout))
	assert.Equal(t, digest, mustDigest(t, fromLayout))

	// The binary out of the image runs and says what the labels say.
	extracted := filepath.Join(dir, "extracted")
	require.NoError(t, os.WriteFile(extracted, files["mcs-gitops"].body, 0o755))
	out, err = exec.Command(extracted, "version", "-o", "json").Output()
	require.NoError(t, err)
	var v info.Info
	require.NoError(t, json.Unmarshal(out, &v))
	assert.Equal(t, cf.Config.Labels["org.opencontainers.image.version"], v.Version)
	assert.Equal(t, cf.Config.Labels["org.opencontainers.image.revision"], v.Revision)
	assert.Equal(t, "linux/"+runtime.GOARCH, v.Platform)
	assert.NotEmpty(t, v.Modules["sigs.k8s.io/mcs-api"])
}

// Without a date from the caller the image takes the commit's; without
// either it refuses rather than take the clock's.
func TestCreatedAt(t *testing.T) {
	commit := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	epoch := time.Unix(1700000000, 999).In(time.FixedZone("x", 3600))

	got, err := createdAt(epoch, info.Info{CommitTime: commit})
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1700000000, 0).UTC(), got, "SOURCE_DATE_EPOCH wins, in UTC, whole seconds")

	got, err = createdAt(time.Time{}, info.Info{CommitTime: commit})
	require.NoError(t, err)
	assert.Equal(t, commit, got)

	_, err = createdAt(time.Time{}, info.Info{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SOURCE_DATE_EPOCH")
}

// A binary that could not start in the image is refused with the reason.
func TestCheckBinary(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	arch, err := checkBinary(&debug.BuildInfo{Path: mainPackage, Settings: settings("CGO_ENABLED", "0", "GOOS", "linux", "GOARCH", "arm64")})
	require.NoError(t, err)
	assert.Equal(t, "arm64", arch)

	for want, bi := range map[string]*debug.BuildInfo{
		"not a build of":   {Path: "example.test/other", Settings: settings("CGO_ENABLED", "0", "GOOS", "linux", "GOARCH", "amd64")},
		"CGO_ENABLED=0":    {Path: mainPackage, Settings: settings("CGO_ENABLED", "1", "GOOS", "linux", "GOARCH", "amd64")},
		"needs GOOS=linux": {Path: mainPackage, Settings: settings("CGO_ENABLED", "0", "GOOS", "darwin", "GOARCH", "arm64")},
		"no GOARCH":        {Path: mainPackage, Settings: settings("CGO_ENABLED", "0", "GOOS", "linux")},
	} {
		_, err := checkBinary(bi)
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
}

// A missing or empty bundle is named, with how to get one, before the
// binary is even read.
func TestCACerts(t *testing.T) {
	_, err := readCACerts("/nonexistent/ca-certificates.crt")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/ca-certificates.crt")
	assert.Contains(t, err.Error(), "apt-get install ca-certificates")

	empty := filepath.Join(t.TempDir(), "empty.crt")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = readCACerts(empty)
	require.Error(t, err)
	assert.Contains(t, err.Error(), empty+": no PEM certificate")
}

type file struct {
	*tar.Header
	body []byte
}

// layerFiles reads the image's one layer: the names in their order, and
// each file by name.
func layerFiles(t *testing.T, img v1.Image) ([]string, map[string]file) {
	t.Helper()
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	var names []string
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, files
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		names = append(names, h.Name)
		files[h.Name] = file{h, b}
	}
}

func mustDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	require.NoError(t, err)
	return d
}

func mustConfigName(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.ConfigName()
	require.NoError(t, err)
	return d
}

func layerDigests(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	layers, err := img.Layers()
	require.NoError(t, err)
	var ds []v1.Hash
	for _, l := range layers {
		d, err := l.Digest()
		require.NoError(t, err)
		ds = append(ds, d)
	}
	return ds
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// selfSignedPEM is a CA bundle of one certificate, so the test does not
// depend on the machine's.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
