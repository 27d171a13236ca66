// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"sort"
)

type allocKey struct {
	ns, svc string
	port    int32
	purpose string
}

// allocate gives every TCP port of m's routed exports a listener port
// from m's range. A committed allocation is kept while its export and
// Service port exist and it is still in the range, valid or not, so an
// export that is briefly invalid gets its port back. New ports take the
// lowest free port, exports in namespace/name order, so the result
// depends only on the input. An export that cannot get all its ports gets
// none of the new ones and is invalid.
//
// weighted asks, after the exports, for one HTTP listener per service
// whose weighted policy this member's gateway carries; the ports it got
// are returned, a missing key meaning the range had none left.
func allocate(m *member, rs []*exportRoute, weighted []allocKey, prev []PortAllocation) ([]PortAllocation, map[allocKey]int32) {
	// wanted maps each TCP port to its current name, which a kept
	// allocation takes over.
	wanted := map[allocKey]string{}
	for _, r := range rs {
		for _, p := range r.tcp {
			wanted[allocKey{r.e.se.Namespace, r.e.se.Name, p.Port, ""}] = p.Name
		}
	}
	for _, k := range weighted {
		wanted[k] = ""
	}
	rng := m.gw.tcp
	held := map[allocKey]PortAllocation{}
	used := map[int32]bool{}
	// A Gateway that declares the listeners itself holds at most
	// maxListeners, for every export of the member together; ListenerSets
	// hold that many each.
	inGateway := 0
	full := func() bool { return m.gw.listenersInGateway && inGateway >= maxListeners }
	for _, a := range prev {
		k := allocKey{a.Namespace, a.Service, a.ServicePort, a.Purpose}
		name, ok := wanted[k]
		if !ok || !rng.Contains(a.Port) || used[a.Port] || full() {
			continue
		}
		a.PortName = name
		if _, dup := held[k]; dup {
			continue
		}
		held[k] = a
		used[a.Port] = true
		inGateway++
	}
	var next int32
	if rng != nil {
		next = rng.From
	}
	free := func() (int32, bool) {
		for ; rng != nil && next <= rng.To; next++ {
			if !used[next] {
				return next, true
			}
		}
		return 0, false
	}
	for _, r := range rs {
		if len(r.tcp) == 0 {
			continue
		}
		var fresh []allocKey
		for _, p := range r.tcp {
			k := allocKey{r.e.se.Namespace, r.e.se.Name, p.Port, ""}
			if a, ok := held[k]; ok {
				r.listeners[p.Port] = a.Port
				continue
			}
			if r.invalid != nil {
				continue
			}
			port, ok := free()
			if !ok || full() {
				for _, f := range fresh {
					delete(used, held[f].Port)
					delete(held, f)
				}
				inGateway -= len(fresh)
				// Ports freed by the rollback are below next; start over.
				if rng != nil {
					next = rng.From
				}
				r.listeners = map[int32]int32{}
				r.fail(ReasonPortRangeExhausted, exhaustedMessage(m, len(r.tcp), ok))
				break
			}
			used[port] = true
			inGateway++
			held[k] = PortAllocation{Port: port, Namespace: k.ns, Service: k.svc, ServicePort: p.Port, PortName: p.Name}
			fresh = append(fresh, k)
			r.listeners[p.Port] = port
		}
	}
	got := map[allocKey]int32{}
	for _, k := range weighted {
		if a, ok := held[k]; ok {
			got[k] = a.Port
			continue
		}
		if port, ok := free(); ok {
			used[port] = true
			held[k] = PortAllocation{Port: port, Namespace: k.ns, Service: k.svc, ServicePort: k.port, Purpose: k.purpose}
			got[k] = port
		}
	}
	var out []PortAllocation
	for _, a := range held {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	return out, got
}

// exhaustedMessage says why an export needing n listener ports got none;
// portsLeft: the range had a port, but the Gateway had no listener left.
func exhaustedMessage(m *member, n int, portsLeft bool) string {
	if portsLeft {
		return fmt.Sprintf("the Service needs %d listener(s) on gateway %s of member %s, which declares them in the Gateway itself (tcpListeners: Gateway), and the %d listeners a Gateway holds are taken by other exports",
			n, m.gw.ref(), m.name, maxListeners)
	}
	if m.gw.tcp == nil {
		return fmt.Sprintf("the Service has %d non-HTTP port(s) to publish on gateway %s of member %s, which has no tcpPorts range", n, m.gw.ref(), m.name)
	}
	return fmt.Sprintf("the Service needs %d listener port(s) on gateway %s of member %s and its tcpPorts range %d-%d has too few left",
		n, m.gw.ref(), m.name, m.gw.tcp.From, m.gw.tcp.To)
}
