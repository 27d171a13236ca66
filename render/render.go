// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Object is one rendered object and the file it goes to, relative to
// clusters/<member>/.
type Object struct {
	Path   string
	Object runtime.Object
}

// Member is what one member should hold.
type Member struct {
	Name      string
	ClusterID string
	// Objects sorted by Path.
	Objects []Object
}

// Output is the whole rendered ClusterSet.
type Output struct {
	Members []Member
	Report  Report
}

// Render applies the KEP-1645 rules to one snapshot per member, and for
// members with a gateway the gateway-mode rules and traffic policies.
// committed are the TCP port allocations of the last render (nil when
// none), kept stable. It fails only on problems with the ClusterSet as a
// whole (a snapshot missing, duplicate cluster IDs); problems with single
// exports or policies go into the report.
func Render(cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot, committed Allocations) (*Output, error) {
	return RenderWith(cfg, snaps, Options{Committed: committed})
}

// Options are the inputs of a render beyond the config and snapshots,
// each read from the commit the render goes on top of.
type Options struct {
	// Committed are the TCP port allocations of the last render.
	Committed Allocations
	// Held are imports review mode holds back until a proposal is merged
	// (status/review.yaml): the member is left out of the service's
	// importers and listed in its report's HeldImports instead.
	Held map[ImportKey]bool
	// Staged are the staged rollouts not every member has reached yet
	// (status/rollouts.yaml): nil when there are none.
	Staged *Staged
}

// ImportKey is one service's import into one member.
type ImportKey struct {
	Member, Namespace, Name string
}

// RenderWith is Render with the options a review-mode commit needs.
func RenderWith(cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot, opts Options) (*Output, error) {
	p, err := Prepare(cfg, snaps, opts)
	if err != nil {
		return nil, err
	}
	services := make([]*ServiceOutput, p.Len())
	for i := range services {
		services[i] = p.Service(i)
	}
	return p.Assemble(services), nil
}

// Service renders the i-th service (in Key order): its report and its
// objects in every member.
func (p *Prepared) Service(i int) *ServiceOutput {
	key := p.keys[i]
	members, plan, index := p.members, p.plan, p.index
	out := &ServiceOutput{Objects: make([][]Object, len(members))}
	objs := out.Objects
	exports := slices.Clone(key.exports)
	sort.SliceStable(exports, func(i, j int) bool { return exports[i].olderThan(exports[j]) })
	rep := ServiceReport{Namespace: key.ns, Name: key.name}
	var valid []*export
	invalid := map[*export][]Condition{}
	for _, e := range exports {
		switch {
		case len(e.rejected) > 0:
			invalid[e] = invalidConditions(ReasonUnloadable, fmt.Sprintf("member %s holds objects of this export that mcs-gitops cannot load, so it is left out: %s",
				e.m.name, strings.Join(e.rejected, "; ")))
		case e.outside.reason != "":
			invalid[e] = invalidConditions(mcsv1alpha1.ServiceExportConditionReason(e.outside.reason), e.outside.msg)
		case e.svc == nil:
			invalid[e] = invalidConditions(mcsv1alpha1.ServiceExportReasonNoService,
				fmt.Sprintf("member %s has no Service %s/%s to export", e.m.name, key.ns, key.name))
		case e.svc.Spec.Type == "ExternalName":
			invalid[e] = invalidConditions(mcsv1alpha1.ServiceExportReasonInvalidServiceType,
				"Service is of type ExternalName, which KEP-1645 does not export")
		default:
			valid = append(valid, e)
		}
	}
	var mg *merged
	var sv *svc
	var unreached map[*export][]string
	if len(valid) > 0 {
		mg = merge(valid)
		rep.Type = string(mg.importType)
		rep.Import = importSpec(mg)
		rep.Endpoints = map[string]int{}
		sv = newSvc(key.ns, key.name, mg, valid, plan)
		if len(mg.conflicts) > 0 {
			rep.Winner = mg.winner.m.name
		}
		var contributors []string
		for _, e := range valid {
			// An export whose every port lost a conflict serves nothing:
			// it is not a source of the import, and its endpoints are
			// not capacity.
			if !sv.servesNothing(e) {
				contributors = append(contributors, e.m.clusterID)
				rep.Endpoints[e.m.name] += e.ready
			}
			// An export its gateway cannot carry stays valid for the
			// members that reach it directly; see svc.endpoints.
			if r := plan.routes[e]; r != nil && r.invalid == nil {
				i := index[e.m]
				objs[i] = append(objs[i], r.exportObjects()...)
				if l := r.gatewayListeners(); len(l) > 0 {
					if out.listeners == nil {
						out.listeners = make([][]gatewayv1.Listener, len(members))
					}
					out.listeners[i] = append(out.listeners[i], l...)
				}
			}
		}
		sort.Strings(contributors)
		out.exportSide = make([]int, len(members))
		for i := range objs {
			out.exportSide[i] = len(objs[i])
		}
		rep.PartialPorts = sv.partialPorts(valid)
		if _, _, reserved := exportedMetadata(mg.winner.se); len(reserved) > 0 {
			sv.warn("the export of %s asks to export %s, which mcs-gitops uses to mark what it owns: left off the ServiceImport",
				mg.winner.m.name, strings.Join(reserved, ", "))
		}
		outside := map[*member]string{}
		for _, e := range exports {
			if e.outside.reason != "" {
				outside[e.m] = e.outside.msg
			}
		}
		for i, m := range members {
			if rule := p.reach.importRule(key.ns, key.name, m, mg.winner.intent); rule != "" {
				rep.OutOfReach = append(rep.OutOfReach, OutOfReach{Member: m.name, Rule: rule})
				if pol := m.policies[key.ns+"/"+key.name]; pol != nil {
					rep.Policies = append(rep.Policies, outOfReachPolicy(m, pol, rule))
				}
				continue
			}
			if p.held[ImportKey{Member: m.name, Namespace: key.ns, Name: key.name}] {
				rep.HeldImports = append(rep.HeldImports, m.name)
				continue
			}
			if !m.namespaces[key.ns] {
				if !p.cfg.Spec.Render.CreateMissingNamespaces {
					rep.MissingNamespace = append(rep.MissingNamespace, m.name)
					continue
				}
				rep.CreatedNamespace = append(rep.CreatedNamespace, m.name)
			}
			rep.ImportedBy = append(rep.ImportedBy, m.name)
			families, ok := m.servedFamilies(mg.families)
			if !ok {
				// The import still tells the member's users the service
				// exists and why they cannot reach it; a derived Service
				// in a family the member lacks would be refused.
				objs[i] = append(objs[i], Object{Path: sv.dir + "serviceimport.yaml",
					Object: serviceImport(p.apiVersion, key.ns, key.name, sv.derived, mg, contributors, mg.families)})
				msg := fmt.Sprintf("member %s serves only %s and the service only %s: it gets no derived Service and no endpoints",
					m.name, familyList(m.families), familyList(mg.families))
				rep.NotServed = append(rep.NotServed, NotServed{Member: m.name, Reason: ReasonIPFamilyNotSupported, Message: msg})
				sv.warn("%s", msg)
				continue
			}
			objs[i] = append(objs[i],
				Object{Path: sv.dir + "serviceimport.yaml", Object: serviceImport(p.apiVersion, key.ns, key.name, sv.derived, mg, contributors, families)},
				Object{Path: sv.dir + "derived-service.yaml", Object: derivedService(key.ns, key.name, sv.derived, mg, families)},
			)
			ch := choose(m, valid, outside, p.byKey, m.policies[key.ns+"/"+key.name])
			weighted := false
			if ch.weights != nil {
				wobjs, weights, why := sv.weighted(m, ch)
				if weighted = why == ""; weighted {
					objs[i] = append(objs[i], wobjs...)
					ch.report.Weights = weights
				} else {
					ch.report.weightsNotApplied(why)
				}
			}
			if ch.report != nil {
				rep.Policies = append(rep.Policies, *ch.report)
			}
			if !weighted {
				for _, e := range ch.sources {
					objs[i] = append(objs[i], sv.endpoints(m, e, sv.derived, sv.portNames)...)
				}
			}
		}
		var importers []*member
		for _, m := range members {
			if slices.Contains(rep.ImportedBy, m.name) {
				importers = append(importers, m)
			}
		}
		sv.warnPartial(rep.PartialPorts, importers)
		rep.Warnings = sv.sortedWarnings()
		unreached = sv.unreached
	}
	note := ""
	if p.staged != nil {
		rep, note = p.staged.stagger(p, i, out, rep)
	}
	for _, e := range exports {
		er := ExportReport{Member: e.m.name, ClusterID: e.m.clusterID, Conditions: invalid[e]}
		if er.Conditions == nil {
			er.Conditions = mg.conditions(e, len(rep.ImportedBy), rep.PartialPorts)
			if sv != nil && sv.servesNothing(e) {
				er.Conditions = servesNothing(er.Conditions, mg, e)
			}
			if r := plan.routes[e]; r != nil && r.invalid != nil {
				er.Conditions = gatewayNotReady(er.Conditions, r, unreached[e])
			}
			er.Conditions = reachNote(er.Conditions, rep)
			if note != "" {
				er.Conditions = withNote(er.Conditions, note)
			}
		}
		rep.Exports = append(rep.Exports, er)
	}
	out.Report = rep
	return out
}

// Assemble makes the Output of every service's (in Key order): each
// member's objects, with the member-level ones (MemberObjects), sorted by
// path, and the report.
func (p *Prepared) Assemble(services []*ServiceOutput) *Output {
	out := &Output{Report: p.Report(services)}
	objs := p.MemberObjects(services)
	for _, s := range services {
		for i := range objs {
			objs[i] = append(objs[i], s.Objects[i]...)
		}
	}
	for i, m := range p.members {
		sort.Slice(objs[i], func(a, b int) bool { return objs[i][a].Path < objs[i][b].Path })
		out.Members = append(out.Members, Member{Name: m.name, ClusterID: m.clusterID, Objects: objs[i]})
	}
	return out
}

// Report is the ClusterSet's report made of every service's (in Key
// order).
func (p *Prepared) Report(services []*ServiceOutput) Report {
	r := Report{Warnings: p.warnings, Services: make([]ServiceReport, len(services)), Gateways: p.plan.reports}
	for i, s := range services {
		r.Services[i] = s.Report
	}
	return r
}

// MemberObjects are, per member, the objects that belong to no single
// service: the Namespaces the services' imports need created there, and
// the Gateway listeners of every export its own Gateway declares. They
// depend on the services' outputs only through their reports and
// listeners, so they are the same for an output taken from an earlier
// render.
func (p *Prepared) MemberObjects(services []*ServiceOutput) [][]Object {
	objs := make([][]Object, len(p.members))
	byName := make(map[string]int, len(p.members))
	for i, m := range p.members {
		byName[m.name] = i
	}
	created := make([]map[string]bool, len(p.members))
	listeners := make([][]gatewayv1.Listener, len(p.members))
	for _, s := range services {
		for _, name := range s.Report.CreatedNamespace {
			i := byName[name]
			if created[i] == nil {
				created[i] = map[string]bool{}
			}
			if ns := s.Report.Namespace; !created[i][ns] {
				created[i][ns] = true
				objs[i] = append(objs[i], Object{Path: ns + "/namespace.yaml", Object: namespaceObject(ns)})
			}
		}
		for i, l := range s.listeners {
			listeners[i] = append(listeners[i], l...)
		}
	}
	for i, m := range p.members {
		if len(listeners[i]) > 0 {
			objs[i] = append(objs[i], m.gw.listenersObject(listeners[i]))
		}
	}
	return objs
}

type serviceKey struct {
	ns, name string
	exports  []*export
}

// collectExports groups every member's ServiceExports by namespace/name,
// each with the Service and EndpointSlices it exports. Exports being deleted
// are left out: the user has withdrawn them.
func collectExports(members []*member) map[string]*serviceKey {
	keys := map[string]*serviceKey{}
	for _, m := range members {
		svcs := map[string]int{}
		for i := range m.snap.Services {
			s := &m.snap.Services[i]
			svcs[s.Namespace+"/"+s.Name] = i
		}
		slices := map[string][]*discoveryv1.EndpointSlice{}
		for i := range m.snap.EndpointSlices {
			sl := &m.snap.EndpointSlices[i]
			// Slices this tool imported carry the derived Service's name, but
			// skip them explicitly so an import is never re-exported.
			if sl.Labels[discoveryv1.LabelManagedBy] == EndpointSliceManager {
				continue
			}
			if svc, ok := sl.Labels[discoveryv1.LabelServiceName]; ok {
				k := sl.Namespace + "/" + svc
				slices[k] = append(slices[k], sl)
			}
		}
		byKey := map[string]*export{}
		add := func(se *mcsv1alpha1.ServiceExport) *export {
			k := se.Namespace + "/" + se.Name
			e := &export{m: m, se: se, slices: slices[k], ready: readyEndpoints(slices[k])}
			if idx, ok := svcs[k]; ok {
				e.svc = &m.snap.Services[idx]
			}
			if keys[k] == nil {
				keys[k] = &serviceKey{ns: se.Namespace, name: se.Name}
			}
			keys[k].exports = append(keys[k].exports, e)
			byKey[k] = e
			return e
		}
		for i := range m.snap.ServiceExports {
			se := &m.snap.ServiceExports[i]
			if se.DeletionTimestamp != nil {
				continue
			}
			add(se)
		}
		// An object left out at collect makes its export invalid, so the
		// tenant sees why on the export instead of the import vanishing.
		for _, r := range m.snap.Rejected {
			k := r.Namespace + "/" + r.Service
			e := byKey[k]
			if e == nil {
				if r.Kind != "ServiceExport" {
					continue // nothing exports the service
				}
				e = add(&mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Service}})
			}
			e.rejected = append(e.rejected, fmt.Sprintf("%s %s/%s: %s", r.Kind, r.Namespace, r.Name, r.Message))
		}
	}
	return keys
}

func sortedKeys(m map[string]*serviceKey) []*serviceKey {
	out := make([]*serviceKey, 0, len(m))
	for _, k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ns != out[j].ns {
			return out[i].ns < out[j].ns
		}
		return out[i].name < out[j].name
	})
	return out
}
