// SPDX-License-Identifier: Apache-2.0

package yamlfast

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// FuzzYAML compares the fast JSON-to-YAML writer with sigs.k8s.io/yaml on
// arbitrary documents, the way layout.Files uses it: whatever encoding/json writes
// for the value, and Marshal's pruning on top. Where the fast writer gives
// up, it must be because the case is one it does not cover, never a
// difference in bytes.
func FuzzYAML(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","creationTimestamp":null},"spec":{"ports":[{"port":80}]},"status":{"loadBalancer":{}}}`,
		`{"a":"","b":"true","c":"1:20","d":"0x1F","e":"2001-12-14","f":"- x","g":"x: y","h":"#x","i":" lead","j":"trail ","k":"it's","l":"\u00e9\u2028","m":"\ufeffbom","n":"tab\there","o":"\ud83d\ude00","p":"-","q":"---x","r":"...","s":"~","t":".5","u":"+1_000","v":"0b101","w":"1e3","x":"10.0.0.1","y":"fd00::1","z":"a\u007fb"}`,
		`{"k":"` + strings.Repeat("word ", 40) + `","l":[` + `"` + strings.Repeat("x", 100) + ` y z","` + strings.Repeat("it's ", 30) + `"],"m":{"n":[[1,2],[],{}],"o":[{"p":null,"q":true}]}}`,
		`{"a10":1,"a9":2,"a09":3,"b":4,"B":5,"_x":6,"1":7,"":8,"é":9,"a.b/c":10}`,
		`{"message":"port \"http\" 80/TCP conflicts with port \"web\" 80/TCP of cluster-2's export, created earlier; cluster-2's port wins"}`,
		`{"x":-5,"y":0,"z":9223372036854775807,"w":1.5,"v":-0}`,
		`{"multi":"line one\nline two"}`,
	} {
		f.Add([]byte(seed))
	}
	cfg, err := v1alpha1.LoadFile(filepath.Join("..", "..", "fixtures", "demo", "clusterset.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	snaps, err := snapshot.LoadDir(filepath.Join("..", "..", "fixtures", "demo", "inputs"), []string{"cluster-1", "cluster-2", "cluster-3"}, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	out, err := render.Render(cfg, snaps, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, o := range out.Members[0].Objects {
		js, err := json.Marshal(o.Object)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
	}
	for _, s := range out.Report.Services {
		js, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
	}

	enc := NewEncoder()
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			return
		}
		if _, ok := v.(map[string]any); !ok {
			return
		}
		js, err := enc.JSON(v)
		if err != nil {
			return
		}
		js = bytes.Clone(js)
		ambiguous := KeyOrderAmbiguous(v)
		for _, prune := range []bool{false, true} {
			var want []byte
			var wantErr error
			if prune {
				want, wantErr = MarshalReference(js)
			} else {
				want, wantErr = yaml.JSONToYAML(js)
			}
			got, err := enc.st.jsonToYAML(js, prune, "")
			if err != nil {
				if err != errUnsupported {
					t.Fatalf("prune=%v: unexpected error %v", prune, err)
				}
				continue
			}
			if wantErr != nil {
				t.Fatalf("prune=%v: reference fails (%v) but the fast writer gave:\n%s", prune, wantErr, got)
			}
			if ambiguous {
				// The reference has no one answer; the fast writer must at
				// least give the same one every time.
				again, err := enc.st.jsonToYAML(js, prune, "")
				if err != nil || !bytes.Equal(got, again) {
					t.Fatalf("prune=%v: fast writer not deterministic: %v\n%s\n---\n%s", prune, err, got, again)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("prune=%v: differs for %s\n--- reference\n%s\n--- fast\n%s", prune, js, want, got)
			}
		}
	})
}
