// SPDX-License-Identifier: Apache-2.0

package main

import (
	"slices"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

func TestParseStacks(t *testing.T) {
	d, v4, v6 := envtest.DualStack, envtest.IPv4Only, envtest.IPv6Only
	for list, want := range map[string][]envtest.Stack{
		"":                     {d, d, d},
		"IPv4":                 {v4, v4, v4},
		"dual-stack,IPv6":      {d, v6, v6},
		"ipv6, v4, dual":       {v6, v4, d},
		"dual-stack,IPv6,IPv4": {d, v6, v4},
	} {
		got, err := parseStacks(list, 3)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseStacks(%q) = %v, %v; want %v", list, got, err, want)
		}
	}
	for _, bad := range []string{"IPv5", "dual,dual,dual,dual", "IPv4,,IPv6"} {
		if _, err := parseStacks(bad, 3); err == nil {
			t.Errorf("parseStacks(%q) was accepted", bad)
		}
	}
}
