// SPDX-License-Identifier: Apache-2.0

package render

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// Labels and annotations the renderer puts on what it emits.
const (
	// ManagedByLabel marks every object mcs-gitops renders, so the applier
	// can tell its objects from a user's.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "mcs-gitops"
	// EndpointSliceManager keeps kube-controller-manager's EndpointSlice
	// controllers away from the imported slices.
	EndpointSliceManager = "mcs-gitops.io"
	// DerivedServiceAnnotation on a ServiceImport names its derived Service,
	// as the upstream reference controller does.
	DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"
)

var hashEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return strings.ToLower(hashEncoding.EncodeToString(sum[:]))[:10]
}

// DerivedServiceName is the name of the Service backing a ServiceImport,
// computed exactly like the upstream mcs-api reference controller so tools
// that know that convention find it.
func DerivedServiceName(namespace, name string) string {
	return "derived-" + shortHash(namespace+"/"+name)
}

// sliceName names an imported EndpointSlice after its derived Service, the
// source cluster and a hash of the source slice, so names stay unique per
// namespace and within 253 characters whatever the input lengths (18 + 1 +
// 63 + 1 + 10).
func sliceName(derived, sourceCluster, sourceSlice string) string {
	return derived + "-" + sourceCluster + "-" + shortHash(sourceCluster+"/"+sourceSlice)
}
