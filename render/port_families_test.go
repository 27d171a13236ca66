// SPDX-License-Identifier: Apache-2.0

package render

import "testing"

func TestPartialPortsNote(t *testing.T) {
	tcp2 := PartialPort{Port: ImportPort{Name: "tcp2", Port: 4242, Protocol: "TCP"}, Families: []string{"IPv6"}, Exporters: []string{"cluster-b"}}
	for _, c := range []struct {
		name     string
		families []string
		want     string
	}{
		{"dual-stack import", []string{"IPv4", "IPv6"}, `; port "tcp2" 4242/TCP is served over IPv6 only (exported by cluster-b): IPv4 clients get no answer on it`},
		{"IPv6-only member", []string{"IPv6"}, ""},
		{"IPv4-only member", []string{"IPv4"}, `; port "tcp2" 4242/TCP is served over IPv6 only (exported by cluster-b): no client here can reach it`},
	} {
		if got := PartialPortsNote([]PartialPort{tcp2}, c.families); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if got := PartialPortsNote(nil, []string{"IPv4", "IPv6"}); got != "" {
		t.Errorf("no partial ports: %q", got)
	}
}
