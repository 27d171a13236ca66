// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// SchemaFile is where the generated JSON Schema lives, relative to the
// repository root; editors point yaml-language-server at it.
const SchemaFile = "schemas/clusterset.schema.json"

// FieldDocs reads the doc comments of the types in this package's source
// directory, keyed "Type.Field" (and "Type" for the type itself), so the
// schema's descriptions are the same words as the Go documentation.
func FieldDocs(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	// types.go and the files split from it (types_git_sync.go, ...).
	files, err := filepath.Glob(filepath.Join(dir, "types*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no types.go in %s", dir)
	}
	docs := map[string]string{}
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := gd.Doc
				if ts.Doc != nil {
					doc = ts.Doc
				}
				if doc != nil {
					docs[ts.Name.Name] = clean(doc.Text())
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					if fld.Doc == nil || len(fld.Names) == 0 {
						continue
					}
					docs[ts.Name.Name+"."+fld.Names[0].Name] = clean(fld.Doc.Text())
				}
			}
		}
	}
	return docs, nil
}

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// JSONSchema generates the JSON Schema (draft 2020-12) of clusterset.yaml
// from the Go types: field names from json tags, constraints from schema
// tags, descriptions from docs. Unknown fields are disallowed, as in the
// strict loader.
func JSONSchema(docs map[string]string) ([]byte, error) {
	s := schemaFor(reflect.TypeOf(ClusterSet{}), docs)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "mcs-gitops ClusterSet"
	props := s["properties"].(map[string]any)
	props["apiVersion"].(map[string]any)["const"] = APIVersion
	props["kind"].(map[string]any)["const"] = Kind
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func schemaFor(t reflect.Type, docs map[string]string) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fs := schemaFor(f.Type, docs)
			if d := docs[t.Name()+"."+f.Name]; d != "" {
				fs["description"] = d
			}
			applyTag(fs, f.Tag.Get("schema"))
			props[name] = fs
			if !strings.Contains(opts, "omitempty") {
				required = append(required, name)
			}
		}
		out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			out["required"] = required
		}
		return out
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem(), docs)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFor(t.Elem(), docs)}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	}
	panic(fmt.Sprintf("jsonschema: unsupported kind %s", t.Kind()))
}

// applyTag reads `schema:"pattern=...;maxLength=63;enum=a|b;default=x"`;
// itemEnum=a|b is the enum of an array's items.
func applyTag(s map[string]any, tag string) {
	if tag == "" {
		return
	}
	for _, kv := range strings.Split(tag, ";") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "enum":
			var vals []any
			for _, e := range strings.Split(v, "|") {
				vals = append(vals, e)
			}
			s["enum"] = vals
		case "itemEnum":
			var vals []any
			for _, e := range strings.Split(v, "|") {
				vals = append(vals, e)
			}
			if items, ok := s["items"].(map[string]any); ok {
				items["enum"] = vals
			} else {
				panic(fmt.Sprintf("jsonschema: itemEnum on a %v", s["type"]))
			}
		case "maxLength", "minimum", "maximum", "minItems", "maxItems":
			n, err := strconv.Atoi(v)
			if err != nil {
				panic(fmt.Sprintf("jsonschema: %s=%q is not a number", k, v))
			}
			s[k] = n
		case "default":
			if s["type"] == "integer" {
				n, _ := strconv.Atoi(v)
				s[k] = n
			} else {
				s[k] = v
			}
		default:
			s[k] = v
		}
	}
}
