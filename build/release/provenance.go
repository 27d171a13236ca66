// SPDX-License-Identifier: Apache-2.0

package main

// The provenance is a SLSA v1 statement: what was built (the binaries and
// the image index, by digest), from what (the commit), how (the release
// tool's build type, its parameters and the Go toolchain) and by whom (a
// local builder: whoever ran `make release` with the signing key). That
// is SLSA Build level 1, and signed; levels 2 and 3 need a hosted build
// platform that signs for itself, such as a CI's keyless identity, which
// docs/releasing.md describes for a real CI.

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/in-toto/in-toto-golang/in_toto"
	"github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/common"
	slsa "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v1"
)

const (
	statementV1      = "https://in-toto.io/Statement/v1"
	slsaProvenanceV1 = slsa.PredicateSLSAProvenance
	// BuildType names the build this provenance describes; its
	// parameters are documented in docs/releasing.md.
	BuildType = "https://github.com/mcs-gitops/mcs-gitops/blob/main/docs/releasing.md#build-type-v1"
	// BuilderID is the local builder: the machine and person that ran
	// make release. A CI's builder would put its own identity here.
	BuilderID = "https://github.com/mcs-gitops/mcs-gitops/blob/main/docs/releasing.md#local-builder"
	sourceURI = "git+https://github.com/mcs-gitops/mcs-gitops"
)

// provenance is the statement's JSON, the same bytes for the same
// release: it holds no time but the commit's.
func provenance(r *Release, src Source, o Options) ([]byte, error) {
	var subjects []in_toto.Subject
	for _, b := range r.Binaries {
		sum, err := fileSHA256(b.Path)
		if err != nil {
			return nil, err
		}
		subjects = append(subjects, in_toto.Subject{Name: b.Name, Digest: common.DigestSet{"sha256": sum}})
	}
	chartSum, err := fileSHA256(filepath.Join(r.Dir, r.Chart))
	if err != nil {
		return nil, err
	}
	subjects = append(subjects, in_toto.Subject{Name: r.Chart, Digest: common.DigestSet{"sha256": chartSum}})
	subjects = append(subjects, in_toto.Subject{Name: ImageIdentity, Digest: common.DigestSet{"sha256": digestHex(r.ImageDigest)}})

	var platforms []string
	for _, p := range o.Platforms {
		platforms = append(platforms, p.String())
	}
	st := in_toto.ProvenanceStatementSLSA1{
		StatementHeader: in_toto.StatementHeader{Type: statementV1, PredicateType: slsaProvenanceV1, Subject: subjects},
		Predicate: slsa.ProvenancePredicate{
			BuildDefinition: slsa.ProvenanceBuildDefinition{
				BuildType: BuildType,
				ExternalParameters: map[string]any{
					"version":   r.Version,
					"source":    map[string]any{"uri": sourceURI, "digest": map[string]string{"gitCommit": src.Revision}},
					"platforms": platforms,
				},
				InternalParameters: map[string]any{
					"env":          map[string]string{"CGO_ENABLED": "0"},
					"flags":        []string{"-trimpath", "-buildvcs=true", "-ldflags=-s -w -X github.com/mcs-gitops/mcs-gitops/internal/buildinfo.version=" + r.Version},
					"package":      MainPackage,
					"uncommitted":  src.Dirty,
					"imageCACerts": map[string]string{"sha256": r.caCertsSHA256},
				},
				ResolvedDependencies: []slsa.ResourceDescriptor{
					{URI: sourceURI, Digest: common.DigestSet{"gitCommit": src.Revision}},
					{URI: "pkg:golang/toolchain@" + src.GoVersion, Name: "go"},
				},
			},
			RunDetails: slsa.ProvenanceRunDetails{
				Builder:       slsa.Builder{ID: BuilderID},
				BuildMetadata: slsa.BuildMetadata{InvocationID: r.Version + "@" + src.Revision},
			},
		},
	}
	return jsonOf(st)
}

func jsonOf(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}
