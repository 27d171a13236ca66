// SPDX-License-Identifier: Apache-2.0

package render

import (
	"net/netip"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Inputs are everything one service's output is made from, beside the
// Context: each member's objects of the service (its ServiceExport,
// Service, EndpointSlices, what was left out of them, and the member's
// GlobalTrafficPolicy for it), the members review mode holds it from,
// and the gateway plan's part for it. Other services reach a service's
// output only through the gateway plan, which is why that part is here.
//
// The objects are held by pointer into the snapshots: callers must not
// modify a snapshot they rendered (the loop's are shared already, see
// snapshot.NormalizeCache).
type Inputs struct {
	exports  []exportInput
	policies map[int]*v1alpha1.GlobalTrafficPolicy
	held     []int
	routes   []routeInput
	weighted map[int]int32
	staged   *stagedInput
}

type exportInput struct {
	member   int
	se       *mcsv1alpha1.ServiceExport
	svc      *corev1.Service
	slices   []*discoveryv1.EndpointSlice
	rejected []string
}

// routeInput is an exportRoute without the pointers back into the render
// (its export and gateway, which Inputs and Context hold by value).
type routeInput struct {
	planned     bool
	http        *corev1.ServicePort
	tcp         []corev1.ServicePort
	unsupported []corev1.ServicePort
	path        *pathRule
	listeners   map[int32]int32
	invalid     []Condition
}

// Same reports whether in and o would render to the same output in the
// same Context. Objects of a snapshot both were taken from compare by
// pointer; others by value.
func (in Inputs) Same(o Inputs) bool { return reflect.DeepEqual(in, o) }

// Inputs are the i-th service's inputs.
func (p *Prepared) Inputs(i int) Inputs {
	key := p.keys[i]
	var in Inputs
	in.exports = make([]exportInput, len(key.exports))
	for j, e := range key.exports {
		in.exports[j] = exportInput{member: p.index[e.m], se: e.se, svc: e.svc, slices: e.slices, rejected: e.rejected}
	}
	id := key.ns + "/" + key.name
	for j, m := range p.members {
		if pol := m.policies[id]; pol != nil {
			if in.policies == nil {
				in.policies = map[int]*v1alpha1.GlobalTrafficPolicy{}
			}
			in.policies[j] = pol
		}
		if p.held[ImportKey{Member: m.name, Namespace: key.ns, Name: key.name}] {
			in.held = append(in.held, j)
		}
		if port, ok := p.plan.weighted[m][id]; ok {
			if in.weighted == nil {
				in.weighted = map[int]int32{}
			}
			in.weighted[j] = port
		}
	}
	if len(p.plan.routes) > 0 {
		in.routes = make([]routeInput, len(key.exports))
		for j, e := range key.exports {
			if r := p.plan.routes[e]; r != nil {
				in.routes[j] = routeInput{planned: true, http: r.http, tcp: r.tcp, unsupported: r.unsupported,
					path: r.path, listeners: r.listeners, invalid: r.invalid}
			}
		}
	}
	if p.staged != nil {
		in.staged = p.staged.input(p, i)
	}
	return in
}

// Context is what every service's output is made from: the members as the
// rules see them (names, cluster IDs, data paths, gateways, namespaces,
// IP families) and the config's render options. A service's output taken
// from a render in another Context cannot be used.
type Context struct {
	apiVersion    string
	createMissing bool
	reach         v1alpha1.ReachPolicy
	members       []memberContext
}

type memberContext struct {
	name, clusterID, key string
	mode                 v1alpha1.DataPathMode
	mesh                 bool
	gw                   *gatewayContext
	namespaces           map[string]bool
	families             []corev1.IPFamily
	labels               map[string]string
}

// gatewayContext is a gateway by value: netip.Addr does not compare by
// DeepEqual the way it does by ==.
type gatewayContext struct {
	gateway   gateway
	addresses []string
}

// Same reports whether services rendered in c and o render alike.
func (c Context) Same(o Context) bool { return reflect.DeepEqual(c, o) }

// Context is the ClusterSet's Context.
func (p *Prepared) Context() Context {
	c := Context{apiVersion: p.apiVersion, createMissing: p.cfg.Spec.Render.CreateMissingNamespaces,
		reach: p.cfg.Spec.Reach, members: make([]memberContext, len(p.members))}
	for i, m := range p.members {
		mc := memberContext{name: m.name, clusterID: m.clusterID, key: m.key, mode: m.mode, mesh: m.mesh,
			namespaces: m.namespaces, families: m.families, labels: m.labels}
		if m.gw != nil {
			g := &gatewayContext{gateway: *m.gw, addresses: addrStrings(m.gw.addresses)}
			g.gateway.addresses = nil
			mc.gw = g
		}
		c.members[i] = mc
	}
	return c
}

func addrStrings(addrs []netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}
