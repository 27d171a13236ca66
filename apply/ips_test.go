// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOrderByFamilyMatchesTheImportsFamilies(t *testing.T) {
	for _, c := range []struct {
		name           string
		ips, fams, out []string
	}{
		{"no families keeps the Service's order", []string{"fd00::a", "10.0.0.1"}, nil, []string{"fd00::a", "10.0.0.1"}},
		{"reordered to the import's families", []string{"10.0.0.1", "fd00::a"}, []string{"IPv6", "IPv4"}, []string{"fd00::a", "10.0.0.1"}},
		{"a family the import lacks is left out", []string{"10.0.0.1", "fd00::a"}, []string{"IPv4"}, []string{"10.0.0.1"}},
		{"a missing family gives fewer ips", []string{"10.0.0.1"}, []string{"IPv4", "IPv6"}, []string{"10.0.0.1"}},
		{"None and garbage are not IPs", []string{"None", "", "x"}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.out, orderByFamily(c.ips, c.fams)) })
	}
}
