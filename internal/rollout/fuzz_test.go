// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"bytes"
	"testing"
)

// FuzzParse: status/rollouts.yaml is a file a person may edit (a
// request). Whatever it holds, Parse does not panic, and what it accepts
// formats to a file that parses back to the same bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte("rollouts:\n- service: shop/cart\n  reached: 1\n  waves: [{name: a, members: [eu-1], soak: 5m}, {name: rest}]\n  request: Resume\n"))
	f.Add([]byte("rollouts:\n- service: shop/cart\n  reached: 2\n  waves: [{name: a}, {name: b}]\n  paused: {wave: 2, member: eu-1, gate: applied, message: refused, since: \"2026-01-01T00:00:00Z\"}\n  before:\n  - member: eu-1\n    serviceExport: {metadata: {name: cart, namespace: shop}}\n    service: {metadata: {name: cart, namespace: shop}, spec: {ports: [{port: 80}]}}\n"))
	f.Add([]byte("rollouts: []\n"))
	f.Add([]byte("rollouts:\n- null\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := Parse(data)
		if err != nil {
			return
		}
		for _, r := range st.Rollouts {
			_ = r.Behind()
			_ = r.Note()
			_ = r.Soak()
		}
		b, err := Format(st)
		if err != nil {
			t.Fatalf("format what parsed: %v", err)
		}
		back, err := Parse(b)
		if err != nil {
			t.Fatalf("what Format wrote does not parse: %v\n%s", err, b)
		}
		again, err := Format(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, again) {
			t.Fatalf("not stable:\n%s\n---\n%s", b, again)
		}
	})
}
