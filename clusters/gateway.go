// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// lookupGateway starts resolving the member's gateway host, when it is a
// DNS name, alongside the read. The returned function waits for the answer
// or for ctx to end, whichever comes first, so a slow resolver costs the
// member its gateway addresses, never its read. It returns nil addresses
// and no error when there is nothing to resolve (no gateway, or an IP
// address: the config then says the address and the snapshot does not).
func (m *Member) lookupGateway(ctx context.Context) func() ([]string, error) {
	host := m.GatewayHost
	if host == "" {
		return func() ([]string, error) { return nil, nil }
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return func() ([]string, error) { return nil, nil }
	}
	lookup := m.LookupHost
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	type answer struct {
		addrs []string
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		addrs, err := lookup(ctx, host)
		done <- answer{addrs, err}
	}()
	return func() ([]string, error) {
		var a answer
		select {
		case a = <-done:
		case <-ctx.Done():
			a.err = ctx.Err()
		}
		addrs, err := gatewayAddresses(a.addrs, a.err)
		if err != nil {
			return nil, fmt.Errorf("member %q: resolving gateway host %q: %w", m.Name, host, err)
		}
		return addrs, nil
	}
}

// gatewayAddresses keeps the IP addresses of a lookup answer, in the form
// snapshot.Parse gives them. Anything else a resolver returns is dropped;
// an answer without a single IP address is a failure.
func gatewayAddresses(answer []string, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, a := range answer {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Zone() == "" {
			ips = append(ips, a)
		}
	}
	if len(ips) == 0 {
		return nil, errors.New("no IP address in the answer")
	}
	return snapshot.NormalizeGatewayAddresses(ips)
}
