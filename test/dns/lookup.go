// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// AwaitTimeout bounds how long Await polls: CoreDNS sees a change only after
// its informers receive the watch event, which takes a moment on a busy
// machine.
const AwaitTimeout = 30 * time.Second

// Query sends one question (recursion not desired) to the server at addr over
// UDP, repeating it over TCP if the answer was truncated, and returns the
// reply whatever its rcode. name may omit the trailing dot.
func Query(ctx context.Context, addr, name string, qtype uint16) (*mdns.Msg, error) {
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(name), qtype)
	m.RecursionDesired = false
	c := &mdns.Client{Net: "udp", Timeout: 2 * time.Second}
	r, _, err := c.ExchangeContext(ctx, m, addr)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.ExchangeContext(ctx, m, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s %s at %s: %w", mdns.TypeToString[qtype], name, addr, err)
	}
	return r, nil
}

// Records renders the answer section of m, sorted, one string per record:
// A and AAAA as the address, SRV as "<port> <target>", CNAME and PTR as the
// target, anything else as its text without the header (owner, TTL, class).
func Records(m *mdns.Msg) []string {
	out := make([]string, 0, len(m.Answer))
	for _, rr := range m.Answer {
		switch v := rr.(type) {
		case *mdns.A:
			out = append(out, v.A.String())
		case *mdns.AAAA:
			out = append(out, v.AAAA.String())
		case *mdns.SRV:
			out = append(out, strconv.Itoa(int(v.Port))+" "+v.Target)
		case *mdns.CNAME:
			out = append(out, v.Target)
		case *mdns.PTR:
			out = append(out, v.Ptr)
		default:
			out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	slices.Sort(out)
	return out
}

// Lookup queries name and returns Records of the answer. A name that does
// not exist (NXDOMAIN) or has no record of that type (NODATA) gives no
// records and no error; any other rcode (SERVFAIL, REFUSED, …) is an error.
func Lookup(ctx context.Context, addr, name string, qtype uint16) ([]string, error) {
	m, err := Query(ctx, addr, name, qtype)
	if err != nil {
		return nil, err
	}
	if m.Rcode != mdns.RcodeSuccess && m.Rcode != mdns.RcodeNameError {
		return nil, fmt.Errorf("query %s %s at %s: rcode %s", mdns.TypeToString[qtype], name, addr, mdns.RcodeToString[m.Rcode])
	}
	return Records(m), nil
}

// Await polls Lookup until its records equal want (in any order; no want
// means "no records") and fails t with the last answer after AwaitTimeout.
func Await(t testing.TB, addr, name string, qtype uint16, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	ctx, cancel := context.WithTimeout(context.Background(), AwaitTimeout)
	defer cancel()
	var got []string
	var err error
	for {
		got, err = Lookup(ctx, addr, name, qtype)
		if err == nil && slices.Equal(got, want) {
			return
		}
		select {
		case <-ctx.Done():
			if err != nil {
				t.Fatalf("%s %s: want %q, last error after %s: %v", mdns.TypeToString[qtype], name, want, AwaitTimeout, err)
			}
			t.Fatalf("%s %s: want %q, got %q after %s", mdns.TypeToString[qtype], name, want, got, AwaitTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// AwaitRcode polls until a query for name answers with rcode (for example
// mdns.RcodeNameError once an import is gone) and fails t after AwaitTimeout.
func AwaitRcode(t testing.TB, addr, name string, qtype uint16, rcode int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), AwaitTimeout)
	defer cancel()
	last := "no answer yet"
	for {
		m, err := Query(ctx, addr, name, qtype)
		switch {
		case err != nil:
			last = err.Error()
		case m.Rcode == rcode:
			return
		default:
			last = fmt.Sprintf("rcode %s, records %q", mdns.RcodeToString[m.Rcode], Records(m))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s %s: want rcode %s, last: %s", mdns.TypeToString[qtype], name, mdns.RcodeToString[rcode], last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
