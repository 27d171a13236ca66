// SPDX-License-Identifier: Apache-2.0

package main

// The chart ships twice, as the same bytes: mcs-gitops-X.Y.Z.tgz, what
// `helm package` writes and `helm push` takes, and chart/, an OCI layout
// holding the Helm OCI artefact of that tgz (Helm's config and layer media
// types, as `helm push` makes it) for tools that copy OCI layouts (oras
// cp --from-oci-layout, crane push). Both carry the release's version,
// stamped at packaging: charts/mcs-gitops/Chart.yaml in the tree says what
// the next release will be, and its dates are the commit's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/mod/semver"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
)

// ChartDir is the chart's OCI layout in the release directory.
const ChartDir = "chart"

// packageChart writes the chart's tgz into dir and its OCI layout into
// dir/chart, and returns the tgz's file name.
func packageChart(ctx context.Context, root, dir, version string, commitTime time.Time) (string, error) {
	ch, err := loader.LoadDir(filepath.Join(root, "charts", "mcs-gitops"))
	if err != nil {
		return "", fmt.Errorf("chart: %w", err)
	}
	ch.Metadata.Version = strings.TrimPrefix(version, "v")
	ch.Metadata.AppVersion = version
	ch.StampModTimes(commitTime.UTC())
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		return "", fmt.Errorf("chart: %w", err)
	}
	tgz, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	config, err := json.Marshal(ch.Metadata)
	if err != nil {
		return "", fmt.Errorf("chart metadata: %w", err)
	}

	store, err := oci.New(filepath.Join(dir, ChartDir))
	if err != nil {
		return "", fmt.Errorf("chart layout: %w", err)
	}
	push := func(mediaType string, b []byte) (ocispec.Descriptor, error) {
		d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
		return d, store.Push(ctx, d, bytes.NewReader(b))
	}
	configDesc, err := push(registry.ConfigMediaType, config)
	if err != nil {
		return "", fmt.Errorf("chart layout: %w", err)
	}
	layer, err := push(registry.ChartLayerMediaType, tgz)
	if err != nil {
		return "", fmt.Errorf("chart layout: %w", err)
	}
	manifest, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
		Layers:           []ocispec.Descriptor{layer},
		ConfigDescriptor: &configDesc,
		ManifestAnnotations: map[string]string{
			ocispec.AnnotationCreated:     commitTime.UTC().Format(time.RFC3339),
			ocispec.AnnotationTitle:       ch.Metadata.Name,
			ocispec.AnnotationVersion:     ch.Metadata.Version,
			ocispec.AnnotationDescription: ch.Metadata.Description,
			ocispec.AnnotationURL:         ch.Metadata.Home,
			ocispec.AnnotationSource:      ch.Metadata.Sources[0],
		},
	})
	if err != nil {
		return "", fmt.Errorf("chart layout: %w", err)
	}
	if err := store.Tag(ctx, manifest, ch.Metadata.Version); err != nil {
		return "", fmt.Errorf("chart layout: %w", err)
	}
	return filepath.Base(path), nil
}

// checkChartVersion refuses to release vX.Y.Z from a tree whose chart (and
// so deploy/, which TestChartRendersDeploy keeps equal to it) runs
// another version by default: the release commit sets appVersion.
// Pre-releases are built from any commit.
func checkChartVersion(root, version string) error {
	if semver.Prerelease(version) != "" {
		return nil
	}
	ch, err := loader.LoadDir(filepath.Join(root, "charts", "mcs-gitops"))
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if ch.Metadata.AppVersion != version {
		return fmt.Errorf("charts/mcs-gitops/Chart.yaml says appVersion %s, and deploy/ the same image tag: the commit of release %s sets both to it (docs/releasing.md, \"Cutting a release\")", ch.Metadata.AppVersion, version)
	}
	return nil
}
