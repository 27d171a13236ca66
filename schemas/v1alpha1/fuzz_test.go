// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// FuzzParseClusterSet: whatever bytes clusterset.yaml holds, Parse never
// panics; an error names the file; and a config it accepts keeps the
// promises the rest of the program relies on: it validates again, it
// holds no credential-shaped value in any string field, and its Git URL's
// user part is a plain user name.
func FuzzParseClusterSet(f *testing.F) {
	for _, s := range configSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := Parse("clusterset.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "clusterset.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if errs := cs.validate(); len(errs) > 0 {
			t.Fatalf("accepted config does not validate again: %v", errs)
		}
		again, err := Parse("clusterset.yaml", data)
		if err != nil {
			t.Fatalf("second parse failed: %v", err)
		}
		again.Default()
		if !reflect.DeepEqual(cs, again) {
			t.Fatalf("defaulting an accepted config again changes it")
		}
		eachString(reflect.ValueOf(cs), "", func(path, v string) {
			if redact.TokenShaped(v) {
				t.Fatalf("accepted a credential-shaped value at %s", path)
			}
		})
		if redact.URLUserIsToken(cs.Spec.Git.URL) {
			t.Fatalf("accepted a token as the Git URL's user")
		}
	})
}

// eachString calls fn for every string reachable from v.
func eachString(v reflect.Value, path string, fn func(path, s string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			eachString(v.Elem(), path, fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				eachString(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			eachString(v.Index(i), path+"[]", fn)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			eachString(k, path+"{key}", fn)
			eachString(v.MapIndex(k), path+"{}", fn)
		}
	case reflect.String:
		fn(path, v.String())
	}
}

// configSeeds are the demo's config, every fixture's, and a few attacks.
func configSeeds(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	demo, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "demo", "clusterset.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	out = append(out, demo)
	archives, err := filepath.Glob(filepath.Join("..", "..", "fixtures", "*.txtar"))
	if err != nil || len(archives) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "clusterset.yaml" {
				out = append(out, file.Data)
			}
		}
	}
	for _, attack := range []string{
		"apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata: {name: x}\nspec:\n  git: {url: 'https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r.git'}\n  members: [{name: a, kubeconfig: {path: a.yaml}}]\n",
		"apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata: {name: x}\nspec:\n  members: [{name: a, kubeconfig: {path: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'}}]\n",
		"apiVersion: mcs-gitops.io/v1alpha1\nkind: ClusterSet\nmetadata: {name: x}\nspec:\n  members: [{name: a, kubeconfig: {path: a.yaml}}, {name: a, kubeconfig: {path: b.yaml}}]\n",
		"{}", "- a\n- b\n", "a: &x [*x]\n",
	} {
		out = append(out, []byte(attack))
	}
	return out
}
