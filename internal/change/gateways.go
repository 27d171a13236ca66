// SPDX-License-Identifier: Apache-2.0

package change

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// Gateway is one property of one member's gateway that changes. Name
// says which: "gateway" (namespace/name of the Gateway the routes attach
// to), "addresses" (where the other members reach it), "httpPort",
// "tcpPorts" (the configured range), or "listener NS/NAME:PORT" (the
// gateway port given to an exported TCP port; "weighted NS/NAME:PORT" for
// a weighted policy's HTTP listener). An empty Old is a member that gets
// the gateway or listener, an empty New one that loses it.
type Gateway struct {
	Member string `json:"member"`
	Name   string `json:"name"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
}

func (g Gateway) String() string {
	switch {
	case g.Old == "":
		return fmt.Sprintf("%s %s added", g.Name, g.New)
	case g.New == "":
		return fmt.Sprintf("%s %s removed", g.Name, g.Old)
	}
	return fmt.Sprintf("%s %s -> %s", g.Name, g.Old, g.New)
}

// GatewaysBetween lists how each member's gateway changes between two
// reports, by member, then property (the gateway itself first, listeners
// by name).
func GatewaysBetween(prev, next *render.Report) []Gateway {
	p, n := gatewayFields(prev), gatewayFields(next)
	var out []Gateway
	for _, m := range unionKeys(p, n) {
		for _, name := range unionKeys(p[m], n[m]) {
			if o, w := p[m][name], n[m][name]; o != w {
				out = append(out, Gateway{Member: m, Name: name, Old: o, New: w})
			}
		}
	}
	// unionKeys sorts by name: the gateway's own properties ("addresses",
	// "gateway", "httpPort", "tcpPorts") before "listener …", "weighted …".
	return out
}

// gatewayFields are each member's gateway properties, by name.
func gatewayFields(r *render.Report) map[string]map[string]string {
	out := map[string]map[string]string{}
	if r == nil {
		return out
	}
	for _, g := range r.Gateways {
		f := map[string]string{
			"gateway":   g.Gateway,
			"addresses": strings.Join(g.Addresses, ", "),
			"httpPort":  strconv.Itoa(int(g.HTTPPort)),
		}
		if g.TCPPorts != "" {
			f["tcpPorts"] = g.TCPPorts
		}
		for _, a := range g.Allocations {
			kind := "listener"
			if a.Purpose == render.PurposeWeighted {
				kind = "weighted"
			}
			key := fmt.Sprintf("%s %s/%s:%d", kind, a.Namespace, a.Service, a.ServicePort)
			f[key] = strconv.Itoa(int(a.Port))
		}
		out[g.Member] = f
	}
	return out
}
