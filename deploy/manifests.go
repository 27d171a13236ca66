// SPDX-License-Identifier: Apache-2.0

// Package deploy holds the manifests users apply with kubectl -k and gives
// the member-side ones to `mcs-gitops member join`, so the files in this
// directory are the only definition of what a member is granted: join
// installs exactly what `kubectl apply -k deploy/member-rbac` would.
//
// It owns decoding those files; it does not talk to any cluster.
package deploy

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed member-rbac/*.yaml member-rbac/*/*.yaml
var files embed.FS

// Member-side manifest sets, by what they are for.
var (
	// MemberRole is the least the loop needs in a member: its ClusterRole,
	// the ServiceAccount kube-system/mcs-gitops bound to it, and the Role
	// that lets doctor read the CoreDNS Corefile.
	MemberRole = []string{"member-rbac/clusterrole.yaml", "member-rbac/binding.yaml", "member-rbac/corefile-reader.yaml"}
	// CreateNamespaces is the extra right spec.render.createMissingNamespaces needs.
	CreateNamespaces = []string{"member-rbac/create-namespaces/clusterrole.yaml", "member-rbac/create-namespaces/binding.yaml"}
	// AdmissionPolicy fences the member identity to the rendered shapes
	// (Kubernetes 1.30 or later).
	AdmissionPolicy = []string{"member-rbac/admission-policy/policy.yaml"}
	// CoreDNS lets the member's CoreDNS read ServiceImports.
	CoreDNS = []string{"member-rbac/coredns/clusterrole.yaml"}
)

// MemberServiceAccount is the identity deploy/member-rbac binds and the
// admission policy names; join issues its tokens.
const (
	MemberServiceAccountNamespace = "kube-system"
	MemberServiceAccountName      = "mcs-gitops"
)

// Objects decodes the named embedded files, every document of each, in
// order.
func Objects(paths ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, p := range paths {
		data, err := files.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("deploy: %s: %w", p, err)
			}
			if len(m) == 0 {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out, nil
}
