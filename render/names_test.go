// SPDX-License-Identifier: Apache-2.0

package render

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"
)

// upstreamDerivedName restates the mcs-api reference controller's formula,
// "derived-" + the first 10 characters of the lowercase, unpadded base32hex
// encoding of sha256("<ns>/<name>"), without encoding/base32, so that a
// mistake in the implementation under test cannot be copied into the
// expectation.
func upstreamDerivedName(ns, name string) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuv"
	sum := sha256.Sum256([]byte(ns + "/" + name))
	// 10 base32 digits are the digest's first 50 bits; 7 bytes hold them.
	var bits uint64
	for _, b := range sum[:7] {
		bits = bits<<8 | uint64(b)
	}
	digits := make([]byte, 10)
	for i := range digits {
		digits[i] = alphabet[bits>>(56-5*(i+1))&31]
	}
	return "derived-" + string(digits)
}

func TestDerivedServiceName(t *testing.T) {
	long63 := "s" + strings.Repeat("x", 62)
	cases := []struct {
		ns, name string
		// pinned is the name computed outside Go (Python's
		// base64.b32hexencode), empty when only the formula is checked.
		pinned string
	}{
		{"shop", "cart", "derived-bsqa4s8pq5"},
		{"httpbin", "httpbin", "derived-te38agkk52"},
		{"db", "postgres", "derived-4nckncpmau"},
		{"default", "kubernetes", ""},
		{"a", "b", ""},
		{long63, long63, ""},
	}
	for _, c := range cases {
		t.Run(c.ns+"/"+c.name, func(t *testing.T) {
			got := DerivedServiceName(c.ns, c.name)
			assert.Equal(t, upstreamDerivedName(c.ns, c.name), got)
			if c.pinned != "" {
				assert.Equal(t, c.pinned, got)
			}
			// It becomes a Service name in every importing cluster.
			assert.Empty(t, validation.IsDNS1035Label(got))
			assert.Len(t, got, len("derived-")+10)
		})
	}
}

// The separator is part of the hashed string, so moving a hyphen between
// namespace and name gives a different Service.
func TestDerivedServiceNameSeparatesNamespaceAndName(t *testing.T) {
	assert.NotEqual(t, DerivedServiceName("a-b", "c"), DerivedServiceName("a", "b-c"))
	assert.NotEqual(t, DerivedServiceName("shop", "cart"), DerivedServiceName("cart", "shop"))
}

func TestSliceNameStaysValid(t *testing.T) {
	derived := DerivedServiceName("n"+strings.Repeat("x", 62), "s"+strings.Repeat("x", 62))
	cluster := "c" + strings.Repeat("x", 62)
	longSlice := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
	require.Len(t, longSlice, 253)

	got := sliceName(derived, cluster, longSlice)
	assert.Empty(t, validation.IsDNS1123Subdomain(got), got)
	assert.Len(t, got, 18+1+63+1+10)
	assert.True(t, strings.HasPrefix(got, derived+"-"+cluster+"-"), got)

	// Names must not collide within a namespace: two slices of one cluster,
	// or the same slice name from two clusters.
	assert.NotEqual(t, got, sliceName(derived, cluster, longSlice[:252]))
	assert.NotEqual(t, sliceName(derived, "east", "cart-abcde"), sliceName(derived, "west", "cart-abcde"))
}
