// SPDX-License-Identifier: Apache-2.0

package change

import (
	"slices"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// Inverse is the change back: applied after s, it restores what s
// changed.
func (s Set) Inverse() Set {
	out := Set{Services: make([]Service, len(s.Services))}
	for i, v := range s.Services {
		out.Services[i] = v.inverse()
	}
	for _, m := range s.Members {
		out.Members = append(out.Members, Member{Name: m.Name, Old: m.New, New: m.Old, Reason: m.Reason, Since: m.Since})
	}
	for _, g := range s.Gateways {
		out.Gateways = append(out.Gateways, Gateway{Member: g.Member, Name: g.Name, Old: g.New, New: g.Old})
	}
	return out
}

func (s Service) inverse() Service {
	out := Service{Namespace: s.Namespace, Name: s.Name, Gained: s.Lost, Lost: s.Gained,
		NamespaceCreated: s.NamespaceNotCreated, NamespaceNotCreated: s.NamespaceCreated}
	for _, e := range s.Exports {
		out.Exports = append(out.Exports, Export{Member: e.Member, Old: e.New, New: e.Old})
	}
	for _, f := range s.Fields {
		out.Fields = append(out.Fields, Field{Name: f.Name, Old: f.New, New: f.Old})
	}
	for _, c := range s.Conflicts {
		out.Conflicts = append(out.Conflicts, Conflict{Member: c.Member, Old: c.New, New: c.Old, OldMessage: c.NewMessage, NewMessage: c.OldMessage})
	}
	for _, p := range s.Policies {
		out.Policies = append(out.Policies, Policy{Member: p.Member, Old: p.New, New: p.Old})
	}
	for _, c := range s.Endpoints {
		out.Endpoints = append(out.Endpoints, Count{Member: c.Member, Old: c.New, New: c.Old})
	}
	return out
}

// Reach is who can reach what in a render: namespace/name to the members
// (Reaching), sorted.
type Reach map[string][]string

// ReachOf reads a report's reach; nil is nothing rendered.
func ReachOf(r *render.Report) Reach {
	out := Reach{}
	if r == nil {
		return out
	}
	for i := range r.Services {
		s := &r.Services[i]
		if reach := Reaching(s); len(reach) > 0 {
			imp := slices.Clone(reach)
			slices.Sort(imp)
			out[s.Namespace+"/"+s.Name] = imp
		}
	}
	return out
}

// Apply returns reach after the change: each service's importers with
// Gained added and Lost removed. A service nobody imports is left out.
func (s Set) Apply(r Reach) Reach {
	out := Reach{}
	for k, v := range r {
		out[k] = slices.Clone(v)
	}
	for _, svc := range s.Services {
		k := svc.Key()
		var next []string
		for _, m := range out[k] {
			if !slices.Contains(svc.Lost, m) {
				next = append(next, m)
			}
		}
		next = append(next, svc.Gained...)
		slices.Sort(next)
		if len(next) == 0 {
			delete(out, k)
		} else {
			out[k] = next
		}
	}
	return out
}
