// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestIPFamiliesComeFromServiceCIDRs(t *testing.T) {
	sc := func(name, cidrs string) string {
		return "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: " + name + ", uid: x}\nspec: {cidrs: " + cidrs + "}\nstatus: {conditions: []}\n---\n"
	}
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	cases := []struct {
		name, input string
		want        []corev1.IPFamily
	}{
		{"none: unknown", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", nil},
		{"IPv4 only", sc("kubernetes", "[10.96.0.0/16]"), []corev1.IPFamily{v4}},
		{"IPv6 only", sc("kubernetes", "[\"fd00:10:96::/112\"]"), []corev1.IPFamily{v6}},
		{"dual-stack, IPv6 primary", sc("kubernetes", "[\"fd00:10:96::/112\", 10.96.0.0/16]"), []corev1.IPFamily{v6, v4}},
		// An extra ServiceCIDR adds a family; the default one's order wins
		// whatever the names sort as.
		{"extra range adds a family", sc("aaa-extra", "[\"fd00:1::/112\"]") + sc("kubernetes", "[10.96.0.0/16]"), []corev1.IPFamily{v4, v6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("m", "in.yaml", []byte(c.input))
			require.NoError(t, err)
			assert.Equal(t, c.want, s.IPFamilies())
			b, err := Format(s)
			require.NoError(t, err)
			again, err := Parse("m", "in.yaml", b)
			require.NoError(t, err)
			assert.Equal(t, s.ServiceCIDRs, again.ServiceCIDRs, "round trip")
			assert.NotContains(t, string(b), "uid", "volatile fields are dropped")
		})
	}
	for name, input := range map[string]string{
		"two of one family": sc("kubernetes", "[10.96.0.0/16, 10.97.0.0/16]"),
		"not a CIDR":        sc("kubernetes", "[10.96.0.1]"),
		"host bits set":     sc("kubernetes", "[10.96.0.1/16]"),
	} {
		_, err := Parse("m", "in.yaml", []byte(input))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "ServiceCIDR kubernetes", name)
	}
}
