// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Wave is one wave of a plan: its members, in config order.
type Wave struct {
	Name    string
	Members []string
	Soak    time.Duration
}

// RestWave names the wave of the members no configured wave selects.
const RestWave = "rest"

// Waves are the waves of p over members: each member in the first wave
// that selects it, and the members no wave selects in a last wave of
// their own (RestWave). A configured wave that selects no member left is
// kept, empty, so that wave numbers match the config.
func Waves(p v1alpha1.RolloutPolicy, members []v1alpha1.Member) ([]Wave, error) {
	placed := map[string]bool{}
	var out []Wave
	for i, w := range p.Waves {
		soak, err := w.Soak.Get(0)
		if err != nil {
			return nil, fmt.Errorf("spec.rollout.waves[%d].soak: %w", i, err)
		}
		wave := Wave{Name: w.Name, Soak: soak}
		for _, m := range members {
			if !placed[m.Name] && w.Members.Matches(m.Name, m.Labels) {
				placed[m.Name] = true
				wave.Members = append(wave.Members, m.Name)
			}
		}
		out = append(out, wave)
	}
	rest := Wave{Name: RestWave}
	for _, m := range members {
		if !placed[m.Name] {
			rest.Members = append(rest.Members, m.Name)
		}
	}
	if len(rest.Members) > 0 {
		out = append(out, rest)
	}
	return out, nil
}

// Staged are the kinds of c that p rolls out in waves, in
// v1alpha1.RolloutKinds order; none when p has no waves.
//
// What is never staged, and why:
//   - endpoint churn and readiness: they are the service's data, not its
//     shape, and holding them back would send traffic to endpoints that
//     are gone or not ready;
//   - a member losing the service (c.Lost) and an exporter leaving: what
//     they withdraw is already gone or refused, and keeping it imported
//     somewhere would only fail there later;
//   - conflicts and traffic policies: a FailOver that waits for a wave is
//     no failover.
func Staged(p v1alpha1.RolloutPolicy, c change.Service) []v1alpha1.RolloutKind {
	if len(p.Waves) == 0 {
		return nil
	}
	kinds := p.Stage
	if len(kinds) == 0 {
		kinds = v1alpha1.RolloutKinds
	}
	has := map[v1alpha1.RolloutKind]bool{}
	has[v1alpha1.RolloutImport] = len(c.Gained) > 0
	for _, f := range c.Fields {
		switch kind, _, _ := strings.Cut(f.Name, " "); kind {
		case "port":
			has[v1alpha1.RolloutPorts] = true
		case "type":
			has[v1alpha1.RolloutType] = true
		case "ipFamilies":
			has[v1alpha1.RolloutFamilies] = true
		}
	}
	for _, e := range c.Exports {
		if !e.Old.Serving() && e.New.Serving() {
			has[v1alpha1.RolloutExporter] = true
		}
	}
	var out []v1alpha1.RolloutKind
	for _, k := range v1alpha1.RolloutKinds {
		if has[k] && slices.Contains(kinds, k) {
			out = append(out, k)
		}
	}
	return out
}
