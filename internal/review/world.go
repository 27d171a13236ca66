// SPDX-License-Identifier: Apache-2.0

package review

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// World is what one render is made from: a snapshot per member and the
// imports held back. The branch's world and each proposal's are built
// from the live snapshots by reverting the structural changes not in it.
type World struct {
	Snapshots []*snapshot.Snapshot
	Held      map[render.ImportKey]bool
}

// build returns the live world with every unit not in applied reverted to
// its approved state: an export or policy as the approved snapshot has it
// (or absent), an import held; the imports in always are held too. Snapshots that change are normalized
// (formatted and parsed back), so the world is exactly what its committed
// inputs/ files give.
func build(live []*snapshot.Snapshot, approved map[string]*snapshot.Snapshot, units []unit, applied map[string]bool, always map[render.ImportKey]bool) (World, error) {
	w := World{Held: map[render.ImportKey]bool{}}
	maps.Copy(w.Held, always)
	revert := map[string][]unit{}
	for _, u := range units {
		if applied[u.String()] {
			continue
		}
		switch u.kind {
		case unitImport:
			w.Held[render.ImportKey{Member: u.member, Namespace: u.ns, Name: u.name}] = true
		default:
			revert[u.member] = append(revert[u.member], u)
		}
	}
	for _, s := range live {
		us := revert[s.Member]
		if len(us) == 0 {
			w.Snapshots = append(w.Snapshots, s)
			continue
		}
		c := s.Clone()
		a := approved[s.Member]
		for _, u := range us {
			switch u.kind {
			case unitExport:
				revertExport(c, a, u.ns, u.name)
			case unitPolicy:
				revertPolicy(c, a, u.ns, u.name)
			}
		}
		_, n, err := snapshot.Normalize(c, snapshot.FileName(s.Member))
		if err != nil {
			return World{}, fmt.Errorf("member %s: the snapshot with its changes under review held back: %w", s.Member, err)
		}
		w.Snapshots = append(w.Snapshots, n)
	}
	return w, nil
}

// revertExport puts member snapshot c's export of ns/name back to what the
// approved snapshot a has: the approved ServiceExport and Service, or
// nothing. Endpoints are churn and stay live; only when the live member
// no longer has any for the service (it withdrew the export, so they were
// not read) are the approved ones kept, frozen, until the withdrawal is
// merged.
func revertExport(c, a *snapshot.Snapshot, ns, name string) {
	liveSlices := filter(c.EndpointSlices, func(i int) bool { return slicesOf(&c.EndpointSlices[i], ns, name) })
	c.ServiceExports = slices.DeleteFunc(c.ServiceExports, func(o mcsv1alpha1.ServiceExport) bool { return o.Namespace == ns && o.Name == name })
	c.Services = slices.DeleteFunc(c.Services, func(o corev1.Service) bool { return o.Namespace == ns && o.Name == name })
	c.EndpointSlices = slices.DeleteFunc(c.EndpointSlices, func(o discoveryv1.EndpointSlice) bool { return slicesOf(&o, ns, name) })
	c.Rejected = slices.DeleteFunc(c.Rejected, func(r snapshot.Rejected) bool { return r.Namespace == ns && r.Service == name })
	if a == nil {
		return
	}
	exported := false
	for _, se := range a.ServiceExports {
		if se.Namespace == ns && se.Name == name && se.DeletionTimestamp == nil {
			c.ServiceExports = append(c.ServiceExports, se)
			exported = true
		}
	}
	for _, r := range a.Rejected {
		if r.Namespace == ns && r.Service == name {
			c.Rejected = append(c.Rejected, r)
			exported = true
		}
	}
	if !exported {
		return
	}
	for _, svc := range a.Services {
		if svc.Namespace == ns && svc.Name == name {
			c.Services = append(c.Services, svc)
		}
	}
	if len(liveSlices) > 0 {
		c.EndpointSlices = append(c.EndpointSlices, liveSlices...)
		return
	}
	for i := range a.EndpointSlices {
		if slicesOf(&a.EndpointSlices[i], ns, name) {
			c.EndpointSlices = append(c.EndpointSlices, a.EndpointSlices[i])
		}
	}
}

// revertPolicy puts member snapshot c's GlobalTrafficPolicy ns/name back
// to the approved one, or removes it.
func revertPolicy(c, a *snapshot.Snapshot, ns, name string) {
	c.GlobalTrafficPolicies = slices.DeleteFunc(c.GlobalTrafficPolicies, func(p v1alpha1.GlobalTrafficPolicy) bool { return p.Namespace == ns && p.Name == name })
	if a == nil {
		return
	}
	for _, p := range a.GlobalTrafficPolicies {
		if p.Namespace == ns && p.Name == name {
			c.GlobalTrafficPolicies = append(c.GlobalTrafficPolicies, p)
		}
	}
}

func filter[T any](s []T, keep func(i int) bool) []T {
	var out []T
	for i := range s {
		if keep(i) {
			out = append(out, s[i])
		}
	}
	return out
}
