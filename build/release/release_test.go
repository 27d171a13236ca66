// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// TestRelease builds a release of this checkout for linux/amd64 and
// linux/arm64, then checks it with the commands docs/releasing.md gives
// users, run with the cosign CLI of the version the release signs with:
// every signature and attestation verifies with the public key, nothing
// verifies once an artefact is changed or with another key, the image
// pushed with `cosign load` verifies in a registry, the SBOM lists
// exactly the go.mod modules linked into the binary, and a second build
// gives the same bytes.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcs-gitops for two platforms and the cosign CLI")
	}
	ctx := context.Background()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	work := t.TempDir()
	c := newCosign(t, work)

	const password = "release-test-password"
	keys := filepath.Join(work, "keys")
	c.run(t, keys, "generate-key-pair")
	other := filepath.Join(work, "other")
	c.run(t, other, "generate-key-pair")

	opts := Options{
		Version:    "v0.0.0-releasetest",
		Platforms:  []Platform{{"linux", "amd64"}, {"linux", "arm64"}},
		Source:     root,
		Out:        filepath.Join(work, "release"),
		Key:        filepath.Join(keys, "cosign.key"),
		Password:   password,
		CACerts:    debianCABundle,
		AllowDirty: true, // a developer's make test runs on their working tree
	}
	r, err := Build(ctx, opts)
	require.NoError(t, err)
	assert.False(t, r.KeyMade)
	names := []string{}
	entries, err := os.ReadDir(r.Dir)
	require.NoError(t, err)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"chart", "checksums.txt", "checksums.txt.sig", "cosign.pub", "image",
		"mcs-gitops-0.0.0-releasetest.tgz", "mcs-gitops-image.cdx.json", "mcs-gitops-linux-amd64", "mcs-gitops-linux-amd64.cdx.json",
		"mcs-gitops-linux-arm64", "mcs-gitops-linux-arm64.cdx.json", "mcs-gitops.intoto.jsonl"}, names)
	pub, err := os.ReadFile(filepath.Join(keys, "cosign.pub"))
	require.NoError(t, err)
	assert.Equal(t, string(pub), mustRead(t, r.PublicKey), "the release ships the signing key's public half")

	t.Run("verifies", func(t *testing.T) {
		sh(t, r.Dir, "sha256sum", "-c", ChecksumsFile)
		c.run(t, r.Dir, "verify-blob", "--key", "cosign.pub", "--signature", ChecksumsSigFile, "--insecure-ignore-tlog", ChecksumsFile)

		out := c.run(t, r.Dir, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog", "--local-image", ImageDir)
		var payloads []struct {
			Critical struct {
				Identity struct {
					DockerReference string `json:"docker-reference"`
				}
				Image struct {
					DockerManifestDigest string `json:"docker-manifest-digest"`
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(out), &payloads), out)
		require.Len(t, payloads, 1)
		assert.Equal(t, r.ImageDigest, payloads[0].Critical.Image.DockerManifestDigest)
		assert.Equal(t, ImageIdentity, payloads[0].Critical.Identity.DockerReference)

		sbom := statementOf(t, c.run(t, r.Dir, "verify-attestation", "--key", "cosign.pub", "--insecure-ignore-tlog", "--local-image", "--type", "cyclonedx", ImageDir))
		assert.Equal(t, "https://cyclonedx.org/bom", sbom.PredicateType)
		assert.JSONEq(t, mustRead(t, filepath.Join(r.Dir, ImageSBOMFile)), string(sbom.Predicate), "the image's SBOM attestation is the released SBOM")
		prov := statementOf(t, c.run(t, r.Dir, "verify-attestation", "--key", "cosign.pub", "--insecure-ignore-tlog", "--local-image", "--type", "slsaprovenance1", ImageDir))
		assert.Equal(t, slsaProvenanceV1, prov.PredicateType)
		for _, b := range r.Binaries {
			c.run(t, r.Dir, "verify-blob-attestation", "--key", "cosign.pub", "--insecure-ignore-tlog",
				"--signature", ProvenanceFile, "--type", "slsaprovenance1", b.Name)
		}
		released := map[string]string{}
		for _, s := range prov.Subject {
			released[s.Name] = s.Digest["sha256"]
		}
		assert.Equal(t, digestHex(r.ImageDigest), released[ImageIdentity])
		var predicate struct {
			BuildDefinition struct {
				ExternalParameters struct {
					Version string
					Source  struct{ Digest map[string]string }
				}
			}
		}
		require.NoError(t, json.Unmarshal(prov.Predicate, &predicate))
		assert.Equal(t, r.Version, predicate.BuildDefinition.ExternalParameters.Version)
		assert.Equal(t, r.Revision, predicate.BuildDefinition.ExternalParameters.Source.Digest["gitCommit"])
	})

	t.Run("the chart, packaged and as an OCI artefact", func(t *testing.T) {
		tgz := filepath.Join(r.Dir, r.Chart)
		ch, err := loader.Load(tgz)
		require.NoError(t, err)
		assert.Equal(t, "0.0.0-releasetest", ch.Metadata.Version)
		assert.Equal(t, r.Version, ch.Metadata.AppVersion, "the chart runs the release's image by default")
		p, err := layout.FromPath(filepath.Join(r.Dir, ChartDir))
		require.NoError(t, err)
		idx, err := p.ImageIndex()
		require.NoError(t, err)
		im, err := idx.IndexManifest()
		require.NoError(t, err)
		require.Len(t, im.Manifests, 1)
		assert.Equal(t, "0.0.0-releasetest", im.Manifests[0].Annotations["org.opencontainers.image.ref.name"])
		img, err := idx.Image(im.Manifests[0].Digest)
		require.NoError(t, err)
		m, err := img.Manifest()
		require.NoError(t, err)
		assert.Equal(t, "application/vnd.cncf.helm.config.v1+json", string(m.Config.MediaType))
		require.Len(t, m.Layers, 1)
		assert.Equal(t, "application/vnd.cncf.helm.chart.content.v1.tar+gzip", string(m.Layers[0].MediaType))
		assert.Equal(t, "sha256:"+sha256Hex([]byte(mustRead(t, tgz))), m.Layers[0].Digest.String(), "the artefact holds the released tgz")
	})

	t.Run("pushed with cosign load, verifies in a registry", func(t *testing.T) {
		reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		t.Cleanup(reg.Close)
		host := strings.TrimPrefix(reg.URL, "http://")
		image := host + "/mcs-gitops:" + r.Version
		c.run(t, r.Dir, "load", "--allow-http-registry", "--dir", ImageDir, image)
		c.run(t, r.Dir, "verify", "--allow-http-registry", "--key", "cosign.pub", "--insecure-ignore-tlog", image)
		ref, err := name.ParseReference(image, name.Insecure)
		require.NoError(t, err)
		idx, err := remote.Index(ref)
		require.NoError(t, err)
		d, err := idx.Digest()
		require.NoError(t, err)
		assert.Equal(t, r.ImageDigest, d.String(), "the registry holds the signed digest")
		m, err := idx.IndexManifest()
		require.NoError(t, err)
		var platforms []string
		for _, desc := range m.Manifests {
			platforms = append(platforms, desc.Platform.String())
		}
		assert.ElementsMatch(t, []string{"linux/amd64", "linux/arm64"}, platforms)
	})

	t.Run("a changed artefact or another key fails", func(t *testing.T) {
		tampered := t.TempDir()
		require.NoError(t, os.CopyFS(tampered, os.DirFS(r.Dir)))
		bin := filepath.Join(tampered, r.Binaries[0].Name)
		f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.Write([]byte{0})
		require.NoError(t, err)
		require.NoError(t, f.Close())
		shFails(t, tampered, "sha256sum", "-c", "--quiet", ChecksumsFile)
		c.fails(t, "no matching subject digest", tampered, "verify-blob-attestation", "--key", "cosign.pub", "--insecure-ignore-tlog",
			"--signature", ProvenanceFile, "--type", "slsaprovenance1", r.Binaries[0].Name)

		sums := filepath.Join(tampered, ChecksumsFile)
		b := []byte(mustRead(t, sums))
		b[0] ^= 1
		require.NoError(t, os.WriteFile(sums, b, 0o644))
		c.fails(t, "invalid signature", tampered, "verify-blob", "--key", "cosign.pub", "--signature", ChecksumsSigFile, "--insecure-ignore-tlog", ChecksumsFile)

		swapIndex(t, filepath.Join(tampered, ImageDir))
		c.fails(t, "invalid or missing digest in claim", tampered, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog", "--local-image", ImageDir)

		otherKey := filepath.Join(other, "cosign.pub")
		c.fails(t, "invalid signature", r.Dir, "verify-blob", "--key", otherKey, "--signature", ChecksumsSigFile, "--insecure-ignore-tlog", ChecksumsFile)
		c.fails(t, "no matching signatures", r.Dir, "verify", "--key", otherKey, "--insecure-ignore-tlog", "--local-image", ImageDir)
	})

	t.Run("the SBOM lists exactly the go.mod modules linked in", func(t *testing.T) {
		for _, b := range r.Binaries {
			var bom struct {
				Metadata struct {
					Component struct{ Name, Version string }
				}
				Components []struct{ Name, Version, Purl string }
			}
			require.NoError(t, json.Unmarshal([]byte(mustRead(t, filepath.Join(r.Dir, b.SBOM))), &bom))
			assert.Equal(t, "github.com/mcs-gitops/mcs-gitops", bom.Metadata.Component.Name)
			assert.Equal(t, r.Version, bom.Metadata.Component.Version)
			var listed []string
			for _, c := range bom.Components {
				listed = append(listed, c.Name+"@"+c.Version)
				assert.Contains(t, c.Purl, "goos="+b.Platform.OS)
			}
			sort.Strings(listed)
			assert.Equal(t, linkedModules(t, root, b.Platform), listed, "%s", b.SBOM)
		}
	})

	t.Run("a second build is the same bytes", func(t *testing.T) {
		again := opts
		again.Out = filepath.Join(work, "again")
		r2, err := Build(ctx, again)
		require.NoError(t, err)
		assert.Equal(t, mustRead(t, filepath.Join(r.Dir, ChecksumsFile)), mustRead(t, filepath.Join(r2.Dir, ChecksumsFile)),
			"binaries and SBOMs")
		assert.Equal(t, r.ImageDigest, r2.ImageDigest)
		assert.Equal(t, envelopePayload(t, filepath.Join(r.Dir, ProvenanceFile)), envelopePayload(t, filepath.Join(r2.Dir, ProvenanceFile)),
			"the provenance statement (its signature is randomised)")
		_, err = Build(ctx, again)
		assert.ErrorContains(t, err, "exists: a release goes into a new directory")
	})
}

// TestBuildRefuses checks the releases that must not be made, before
// anything is built.
func TestBuildRefuses(t *testing.T) {
	ctx := context.Background()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dirty := t.TempDir()
	sh(t, dirty, "git", "init", "-q")
	sh(t, dirty, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "x")
	require.NoError(t, os.WriteFile(filepath.Join(dirty, "tracked"), []byte("a"), 0o644))
	sh(t, dirty, "git", "add", "tracked")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no version", []string{"--source", root}, `--version ""`},
		{"not semver", []string{"--version", "1.2.3", "--source", root}, `--version "1.2.3": want vMAJOR.MINOR.PATCH`},
		{"bad platform", []string{"--version", "v1.2.3", "--platforms", "linux", "--source", root}, `"linux" is not GOOS/GOARCH`},
		{"not a checkout", []string{"--version", "v1.2.3", "--source", t.TempDir()}, "not a Git checkout"},
		{"uncommitted changes", []string{"--version", "v1.2.3", "--source", dirty, "--out", filepath.Join(t.TempDir(), "r")}, "has uncommitted changes"},
		{"chart of another version", []string{"--version", "v9.9.9", "--source", root, "--allow-dirty", "--out", filepath.Join(t.TempDir(), "r")}, "Chart.yaml says appVersion"},
		{"wrong password", []string{"--version", "v1.2.3-rc.1", "--source", root, "--allow-dirty", "--key", writeKey(t, "right"), "--out", filepath.Join(t.TempDir(), "r")}, "is COSIGN_PASSWORD its password?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("COSIGN_PASSWORD", "wrong")
			err := run(ctx, tc.args)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "wrong", "never the password")
		})
	}
}

func writeKey(t *testing.T, password string) string {
	path := filepath.Join(t.TempDir(), "cosign.key")
	require.NoError(t, makeKeyPair(path, password))
	return path
}

// linkedModules is what the go command says the binary for p links in,
// from go.mod and the import graph rather than from the binary: every
// module but the main one that provides a package the build uses.
func linkedModules(t *testing.T, root string, p Platform) []string {
	out, err := command(context.Background(), root, []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Arch},
		"go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}}{{end}}{{end}}", "./cmd/mcs-gitops")
	require.NoError(t, err)
	set := map[string]bool{}
	for _, l := range strings.Fields(out) {
		set[l] = true
	}
	all, err := command(context.Background(), root, nil, "go", "list", "-m", "-f", "{{.Path}}@{{.Version}}", "all")
	require.NoError(t, err)
	inGoMod := map[string]bool{}
	for _, l := range strings.Fields(all) {
		inGoMod[l] = true
	}
	var mods []string
	for m := range set {
		require.True(t, inGoMod[m], "%s is linked but not in go.mod's module graph", m)
		mods = append(mods, m)
	}
	sort.Strings(mods)
	return mods
}

// swapIndex changes the signed index in a layout, as someone replacing
// the image would: a new index (another annotation) under the same
// signature.
func swapIndex(t *testing.T, layoutDir string) {
	indexPath := filepath.Join(layoutDir, "index.json")
	var top struct {
		SchemaVersion int              `json:"schemaVersion"`
		MediaType     string           `json:"mediaType,omitempty"`
		Manifests     []map[string]any `json:"manifests"`
	}
	require.NoError(t, json.Unmarshal([]byte(mustRead(t, indexPath)), &top))
	for _, m := range top.Manifests {
		if m["annotations"].(map[string]any)["kind"] != "dev.cosignproject.cosign/imageIndex" {
			continue
		}
		digest := m["digest"].(string)
		blob := filepath.Join(layoutDir, "blobs", "sha256", digestHex(digest))
		var idx map[string]any
		require.NoError(t, json.Unmarshal([]byte(mustRead(t, blob)), &idx))
		idx["annotations"].(map[string]any)["org.opencontainers.image.version"] = "v9.9.9"
		b, err := json.Marshal(idx)
		require.NoError(t, err)
		sum := sha256Hex(b)
		require.NoError(t, os.WriteFile(filepath.Join(layoutDir, "blobs", "sha256", sum), b, 0o644))
		m["digest"], m["size"] = "sha256:"+sum, len(b)
		out, err := json.Marshal(top)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(indexPath, out, 0o644))
		return
	}
	t.Fatal("no signed index in the layout")
}

type statement struct {
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string
		Digest map[string]string
	}
	Predicate json.RawMessage
}

// statementOf decodes the one in-toto statement in cosign
// verify-attestation's output (one DSSE envelope per line).
func statementOf(t *testing.T, out string) statement {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1, out)
	var env struct{ Payload string }
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &env))
	b, err := base64.StdEncoding.DecodeString(env.Payload)
	require.NoError(t, err)
	var s statement
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

func envelopePayload(t *testing.T, path string) string {
	var env struct{ Payload string }
	require.NoError(t, json.Unmarshal([]byte(mustRead(t, path)), &env))
	b, err := base64.StdEncoding.DecodeString(env.Payload)
	require.NoError(t, err)
	return string(b)
}

// cosignCLI runs the cosign command users run, built from the module
// version this release signs with (go.mod's tool line).
type cosignCLI struct {
	bin string
	env []string
}

func newCosign(t *testing.T, work string) cosignCLI {
	bin := filepath.Join(work, "cosign")
	_, err := command(context.Background(), ".", nil, "go", "build", "-o", bin, "github.com/sigstore/cosign/v2/cmd/cosign")
	require.NoError(t, err)
	// Its trust-root cache goes into the test's directory, not $HOME;
	// the password is the one the test keys are made with.
	return cosignCLI{bin: bin, env: []string{"TUF_ROOT=" + filepath.Join(work, "tuf"), "HOME=" + work, "COSIGN_PASSWORD=release-test-password"}}
}

func (c cosignCLI) cmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	return cmd
}

func (c cosignCLI) run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := c.cmd(t, dir, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "cosign %s:\n%s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// fails runs a verification that must fail, and checks it failed for
// the reason want names rather than, say, a missing file.
func (c cosignCLI) fails(t *testing.T, want, dir string, args ...string) {
	t.Helper()
	out, err := c.cmd(t, dir, args...).CombinedOutput()
	require.Error(t, err, "cosign %s verified what it must not:\n%s", strings.Join(args, " "), out)
	assert.Contains(t, string(out), want, "cosign %s", strings.Join(args, " "))
}

func sh(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
}

func shFails(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s %s passed: %s", name, strings.Join(args, " "), out)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
