// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/mcs-gitops/mcs-gitops/schemas/crds"
)

// Every field the Go types read must be in the CRD the project ships, or
// an apiserver with that CRD prunes it and the field is never seen.
func TestCRDHasEveryFieldRead(t *testing.T) {
	crd, err := crds.ClusterProfile()
	require.NoError(t, err)
	assert.Equal(t, Group, crd.Spec.Group)
	assert.Equal(t, Kind, crd.Spec.Names.Kind)
	assert.Equal(t, Resource, crd.Spec.Names.Plural)
	assert.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
	require.Len(t, crd.Spec.Versions, 1)
	v := crd.Spec.Versions[0]
	assert.Equal(t, Version, v.Name)
	require.NotNil(t, v.Subresources)
	assert.NotNil(t, v.Subresources.Status, "cluster managers write status through the subresource")
	root := v.Schema.OpenAPIV3Schema
	checkFields(t, "spec", reflect.TypeFor[ProfileSpec](), root.Properties["spec"])
	checkFields(t, "status", reflect.TypeFor[ProfileStatus](), root.Properties["status"])
}

func checkFields(t *testing.T, path string, typ reflect.Type, s apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
		if s.Items != nil && s.Items.Schema != nil {
			s = *s.Items.Schema
		}
	}
	if typ.Kind() != reflect.Struct || typ.PkgPath() == "k8s.io/apimachinery/pkg/apis/meta/v1" {
		return
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		sub, ok := s.Properties[name]
		if !assert.Truef(t, ok, "%s.%s is read but not in the CRD", path, name) {
			continue
		}
		if f.Type.String() == "runtime.RawExtension" || sub.XPreserveUnknownFields != nil {
			continue
		}
		checkFields(t, path+"."+name, f.Type, sub)
	}
}
