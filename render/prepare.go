// SPDX-License-Identifier: Apache-2.0

package render

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Prepared is a ClusterSet made ready to render service by service: its
// members resolved, its exports grouped by service, and the gateway plan
// settled, which spans services (claims and port allocations are per
// gateway). RenderWith is Prepare, Service for every service and
// Assemble. A caller that keeps what it made of a service's output may
// use it again instead of calling Service while the service's Inputs and
// the ClusterSet's Context are the Same as when it was rendered: Service
// would give an equal output (layout.Renderer does this).
type Prepared struct {
	cfg        *v1alpha1.ClusterSet
	apiVersion string
	held       map[ImportKey]bool
	members    []*member
	index      map[*member]int
	byKey      map[string]*member
	keys       []*serviceKey
	plan       *gatewayPlan
	reach      reach
	warnings   []string
	// staged is the before side of the staged rollouts (Options.Staged);
	// nil when none is behind anywhere.
	staged *staging
}

// ServiceOutput is what one service renders to.
type ServiceOutput struct {
	Report ServiceReport
	// Objects are the service's objects in each member (in Members
	// order), in no particular order. The namespaces they need and the
	// Gateway listeners are MemberObjects.
	Objects [][]Object
	// exportSide counts, per member, the objects at the head of Objects
	// that the member's own exports need (gateway routes): a staged
	// rollout keeps them current while the member's import waits.
	exportSide []int
	// listeners are, per member, the listeners of the service's exports
	// that the member's own Gateway declares (tcpListeners: Gateway); nil
	// when there are none.
	listeners [][]gatewayv1.Listener
}

// WithoutObjects is s with its objects dropped: what MemberObjects and
// Assemble's report need of it, for a caller that keeps outputs after it
// has serialized their objects.
func (s *ServiceOutput) WithoutObjects() *ServiceOutput {
	return &ServiceOutput{Report: s.Report, listeners: s.listeners, exportSide: s.exportSide}
}

// Prepare resolves the members and plans the gateways. It fails on what
// Render fails on.
func Prepare(cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot, opts Options) (*Prepared, error) {
	members, warnings, err := resolveMembers(cfg, snaps)
	if err != nil {
		return nil, err
	}
	p := &Prepared{cfg: cfg, held: opts.Held, members: members, warnings: warnings,
		apiVersion: string(cfg.Spec.Render.ServiceImportAPIVersion),
		index:      make(map[*member]int, len(members)), byKey: make(map[string]*member, len(members))}
	if p.apiVersion == "" {
		p.apiVersion = string(v1alpha1.ServiceImportV1Alpha1)
	}
	for i, m := range members {
		p.index[m] = i
		p.byKey[m.key] = m
	}
	p.keys = sortedKeys(collectExports(members))
	p.reach = newReach(cfg.Spec.Reach)
	for _, k := range p.keys {
		for _, e := range k.exports {
			p.reach.judge(k.ns, e)
		}
	}
	p.plan = planGateways(members, p.keys, opts.Committed)
	if p.staged, err = prepareStaged(cfg, opts); err != nil {
		return nil, err
	}
	return p, nil
}

// Len is the number of exported services.
func (p *Prepared) Len() int { return len(p.keys) }

// Key is the namespace and name of the i-th service, in the order of
// Report.Services.
func (p *Prepared) Key(i int) (namespace, name string) { return p.keys[i].ns, p.keys[i].name }

// Members are the members' names, in config order: the order of
// ServiceOutput.Objects and Output.Members.
func (p *Prepared) Members() []string {
	out := make([]string, len(p.members))
	for i, m := range p.members {
		out[i] = m.name
	}
	return out
}
