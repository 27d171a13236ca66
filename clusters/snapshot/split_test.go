// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// nonNullDocs counts the documents of data that are mappings (what a
// Kubernetes object is), as splitDocuments and Parse see them; ok is false
// when one is not YAML. Scalars are left out of the comparison: YAML 1.1
// (sigs.k8s.io/yaml) and 1.2 (yaml.v3) disagree on what "!" or "yes" are,
// which is not a question of where documents begin.
func nonNullDocs(data []byte) (n int, ok bool) {
	for _, d := range splitDocuments(data) {
		var v any
		if err := yaml.Unmarshal(d.body, &v); err != nil {
			return 0, false
		}
		if v != nil && reflect.TypeOf(v).Kind() == reflect.Map {
			n++
		}
	}
	return n, true
}

// v3Docs counts the mapping documents go.yaml.in/yaml/v3's stream decoder
// finds; ok is false when it refuses the stream.
func v3Docs(data []byte) (n int, ok bool) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return n, true
		}
		if err != nil {
			return 0, false
		}
		if v != nil && reflect.TypeOf(v).Kind() == reflect.Map {
			n++
		}
	}
}

// Documents a person may write between markers must all be found: before,
// one after "--- # comment", "--- {inline}" or a "..." end marker was
// silently merged into the one before and dropped.
func TestSplitDocumentsAgreesWithYAMLv3(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
	ns2 := "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"
	cases := map[string]string{
		"plain":                ns + "---\n" + ns2,
		"marker with comment":  ns + "--- # the second\n" + ns2,
		"inline flow document": ns + "--- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n",
		"end marker":           ns + "...\n---\n" + ns2,
		"leading marker":       "---\n" + ns + "---\n" + ns2 + "---\n",
		"CRLF":                 "apiVersion: v1\r\nkind: Namespace\r\nmetadata: {name: a}\r\n---\r\n" + ns2,
		"marker-like key":      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels: {x: '---'}\n---\n" + ns2,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			want, ok := v3Docs([]byte(in))
			require.True(t, ok)
			got, ok := nonNullDocs([]byte(in))
			require.True(t, ok)
			assert.Equal(t, want, got)
			s, err := Parse("m", "in.yaml", []byte(in))
			require.NoError(t, err)
			assert.Len(t, s.Namespaces, 2, "both Namespaces load")
		})
	}
}

// FuzzSplitDocuments: for any stream both decoders accept, the documents
// splitDocuments finds are the ones yaml.v3 finds.
func FuzzSplitDocuments(f *testing.F) {
	for _, s := range []string{"a: 1\n---\nb: 2\n", "a: 1\n--- # c\nb: 2\n", "a: 1\n--- [1]\n", "a: 1\n...\nb: 2\n", "--- |\n  x\n", "a: '---'\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, ok := v3Docs(data)
		if !ok {
			return
		}
		got, ok := nonNullDocs(data)
		if !ok {
			return // the YAML 1.1 decoder refuses what 1.2 accepts, e.g. some tabs
		}
		if got != want {
			t.Fatalf("splitDocuments found %d documents, yaml.v3 %d, in %q", got, want, data)
		}
	})
}
