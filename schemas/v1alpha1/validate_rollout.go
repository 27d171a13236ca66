// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"maps"
	"net"
	"slices"
)

// validate checks spec.rollout (p) against the members.
func (r RolloutPolicy) validate(p string, known func(string) bool) ErrorList {
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	switch r.Unreachable {
	case "", RolloutBlock, RolloutSkip:
	default:
		add(p+".unreachable", "must be %s or %s, got %q", RolloutBlock, RolloutSkip, r.Unreachable)
	}
	for i, k := range r.Stage {
		if !slices.Contains(RolloutKinds, k) {
			add(fmt.Sprintf("%s.stage[%d]", p, i), "unknown kind %q: one of Import, Ports, Type, Families, Exporter", k)
		}
	}
	if r.DNS != nil {
		for _, m := range slices.Sorted(maps.Keys(r.DNS.Servers)) {
			if !known(m) {
				add(p+".dns.servers."+m, "%q is not a member", m)
			} else if _, _, err := net.SplitHostPort(r.DNS.Servers[m]); err != nil {
				add(p+".dns.servers."+m, "must be host:port, got %q", r.DNS.Servers[m])
			}
		}
	}
	names := map[string]int{}
	for i, w := range r.Waves {
		wp := fmt.Sprintf("%s.waves[%d]", p, i)
		if w.Name == "" {
			add(wp+".name", "required")
		} else if j, dup := names[w.Name]; dup {
			add(wp+".name", "wave %q is already %s.waves[%d]", w.Name, p, j)
		} else {
			names[w.Name] = i
		}
		errs = append(errs, selectorProblems(wp+".members", w.Members, known)...)
		if _, err := w.Soak.Get(0); err != nil {
			add(wp+".soak", "%v", err)
		}
	}
	return errs
}
