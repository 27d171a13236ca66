// SPDX-License-Identifier: Apache-2.0

package crds

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func TestGlobalTrafficPolicyCRDIdentity(t *testing.T) {
	crd, err := GlobalTrafficPolicy()
	require.NoError(t, err, "the manifest decodes strictly")
	assert.Equal(t, v1alpha1.Group, crd.Spec.Group)
	assert.Equal(t, v1alpha1.GlobalTrafficPolicyKind, crd.Spec.Names.Kind)
	assert.Equal(t, v1alpha1.GlobalTrafficPolicyResource, crd.Spec.Names.Plural)
	assert.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
	require.Len(t, crd.Spec.Versions, 1)
	v := crd.Spec.Versions[0]
	assert.Equal(t, v1alpha1.Version, v.Name)
	assert.True(t, v.Served && v.Storage)
	require.NotNil(t, v.Subresources, "mcs-gitops writes status through the status subresource")
	assert.NotNil(t, v.Subresources.Status)
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, c.Name+"="+c.JSONPath)
	}
	assert.Equal(t, []string{"LbType=.spec.lbType", "Age=.metadata.creationTimestamp"}, cols)

	spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
	var enum []string
	for _, e := range spec.Properties["lbType"].Enum {
		enum = append(enum, strings.Trim(string(e.Raw), `"`))
	}
	assert.Equal(t, []string{string(v1alpha1.Locality), string(v1alpha1.FailOver), string(v1alpha1.ActiveActive)}, enum)
}

// The hand-written schema and the Go type must name the same fields, with
// matching JSON types, and require exactly the fields the Go type does not
// mark omitempty: a field added to one and not the other would be silently
// pruned by the apiserver or never read.
func TestGlobalTrafficPolicySchemaMatchesGoType(t *testing.T) {
	crd, err := GlobalTrafficPolicy()
	require.NoError(t, err)
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, f := range []struct {
		name string
		typ  reflect.Type
	}{
		{"spec", reflect.TypeFor[v1alpha1.GlobalTrafficPolicySpec]()},
		{"status", reflect.TypeFor[v1alpha1.GlobalTrafficPolicyStatus]()},
	} {
		s, ok := root.Properties[f.name]
		require.True(t, ok, "schema has no %s", f.name)
		compareSchema(t, f.name, f.typ, &s)
	}
	assert.Equal(t, []string{"spec"}, root.Required)
}

func compareSchema(t *testing.T, path string, typ reflect.Type, s *apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == reflect.TypeFor[metav1.Time]() {
		assert.Equal(t, "string", s.Type, "%s", path)
		assert.Equal(t, "date-time", s.Format, "%s", path)
		return
	}
	switch typ.Kind() {
	case reflect.String:
		assert.Equal(t, "string", s.Type, "%s", path)
	case reflect.Int32, reflect.Int64:
		assert.Equal(t, "integer", s.Type, "%s", path)
		assert.Equal(t, typ.Kind().String(), s.Format, "%s", path)
	case reflect.Slice:
		require.Equal(t, "array", s.Type, "%s", path)
		require.NotNil(t, s.Items, "%s", path)
		compareSchema(t, path+"[]", typ.Elem(), s.Items.Schema)
	case reflect.Map:
		require.Equal(t, "object", s.Type, "%s", path)
		require.NotNil(t, s.AdditionalProperties, "%s", path)
		compareSchema(t, path+"{}", typ.Elem(), s.AdditionalProperties.Schema)
	case reflect.Struct:
		require.Equal(t, "object", s.Type, "%s", path)
		var fields, required []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Fatalf("%s.%s: no JSON name", path, f.Name)
			}
			fields = append(fields, name)
			if !slices.Contains(strings.Split(opts, ","), "omitempty") {
				required = append(required, name)
			}
			p, ok := s.Properties[name]
			if !assert.True(t, ok, "%s.%s is in the Go type, not in the schema", path, name) {
				continue
			}
			assert.NotEmpty(t, p.Description, "%s.%s has no description", path, name)
			compareSchema(t, path+"."+name, f.Type, &p)
		}
		for name := range s.Properties {
			assert.Contains(t, fields, name, "%s.%s is in the schema, not in the Go type", path, name)
		}
		slices.Sort(required)
		have := slices.Sorted(slices.Values(s.Required))
		assert.Equal(t, required, have, "%s: required fields", path)
	default:
		t.Fatalf("%s: Go kind %s not handled", path, typ.Kind())
	}
}
