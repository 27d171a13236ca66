// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// NormalizeGatewayAddresses gives addresses the form Snapshot.GatewayAddresses
// holds: canonical text (so "fd00::01" and "fd00::1" are one address),
// sorted by address, without duplicates. It fails on the first entry that is
// not an IP address; a zone ("fe80::1%eth0") is refused too, since it means
// nothing to another cluster. Collecting and parsing both go through it, so a
// collected snapshot equals its formatted and parsed-again self.
func NormalizeGatewayAddresses(addrs []string) ([]string, error) {
	parsed := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address", a)
		}
		parsed = append(parsed, ip)
	}
	slices.SortFunc(parsed, netip.Addr.Compare)
	parsed = slices.Compact(parsed)
	out := make([]string, len(parsed))
	for i, ip := range parsed {
		out[i] = ip.String()
	}
	return out, nil
}

// parseGatewayAddresses reads the comma-separated value of the
// GatewayAddressesProperty ClusterProperty. An empty value is an error: Format
// leaves the property out rather than write one, so it cannot come from a
// collected snapshot.
func parseGatewayAddresses(value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return nil, errors.New("is empty")
	}
	parts := strings.Split(value, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return NormalizeGatewayAddresses(parts)
}

// formatGatewayAddresses is the GatewayAddressesProperty value for addrs.
func formatGatewayAddresses(addrs []string) string { return strings.Join(addrs, ",") }
