// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"encoding/json"
	"reflect"
	"testing"
)

func FuzzParseProviders(f *testing.F) {
	for _, seed := range []string{
		fullProviderFile,
		`{"providers": [{"name": "a", "execConfig": {"command": "c"}}]}`,
		`{"providers": [{"name": "a", "execConfig": {"command": "c", "args": [], "env": []}}]}`,
		`{"providers": [{"name": "a", "execConfig": {"command": "c", "env": [{"name": "K", "value": "\u00e9\ud800"}]}, "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}]}`,
		`{"providers": [{"name": "a", "execConfig": null}]}`,
		`{"providers": [{"name": "a", "name": "a"}]}`,
		`{"providers": [{"Name": "a"}]}`,
		`{"providers": {}}`,
		`{"providers": [1]}`,
		`{"providers": [{"name": "a", "execConfig": {"command": "c", "env": [{"name": "N", "value": 1e999}]}}]}`,
		`{} {}`,
		`null`,
		``,
		"{\"providers\": [\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := ParseProviders("fuzz.json", data)
		if err != nil {
			if pf != nil {
				t.Fatalf("a file with an error: %v", err)
			}
			return
		}
		out, err := json.Marshal(pf)
		if err != nil {
			t.Fatalf("a parsed file does not format: %v", err)
		}
		again, err := ParseProviders("fuzz.json", out)
		if err != nil {
			t.Fatalf("a formatted file does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(pf, again) {
			t.Fatalf("round trip changed the file:\n%#v\n%#v", pf, again)
		}
	})
}
