// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Staging is what a render needs of s (render.Staged): the live world
// with every rolling service's exports as they were before, the imports
// that world did not have, the members each rollout has not reached,
// and each rollout's note. Nil when s has no rollout.
//
// An exporter that withdrew its export since is left withdrawn in the
// world before too: a withdrawal is never staged, since what it would
// keep imported is gone. Endpoints stay live everywhere: churn is never
// staged either.
func Staging(s *State, live []*snapshot.Snapshot) *render.Staged {
	if s == nil || len(s.Rollouts) == 0 {
		return nil
	}
	st := &render.Staged{BeforeHeld: map[render.ImportKey]bool{}, Behind: map[render.ImportKey]bool{}, Notes: map[string]string{}}
	for _, r := range s.Rollouts {
		ns, name, _ := strings.Cut(r.Service, "/")
		for _, m := range r.Behind() {
			k := render.ImportKey{Member: m, Namespace: ns, Name: name}
			st.Behind[k] = true
			if !slices.Contains(r.Importers, m) {
				st.BeforeHeld[k] = true
			}
		}
		st.Notes[r.Service] = r.Note()
	}
	for _, snap := range live {
		var c *snapshot.Snapshot
		for _, r := range s.Rollouts {
			ns, name, _ := strings.Cut(r.Service, "/")
			if !exports(snap, ns, name) {
				continue
			}
			if c == nil {
				c = snap.Clone()
			}
			revert(c, r.Before, ns, name)
		}
		if c == nil {
			c = snap
		}
		st.Before = append(st.Before, c)
	}
	return st
}

func exports(s *snapshot.Snapshot, ns, name string) bool {
	return s != nil && slices.ContainsFunc(s.ServiceExports, func(se mcsv1alpha1.ServiceExport) bool {
		return se.Namespace == ns && se.Name == name && se.DeletionTimestamp == nil
	})
}

// revert puts c's export of ns/name back to its export in before, or
// takes it out when before has none from c's member.
func revert(c *snapshot.Snapshot, before []Export, ns, name string) {
	c.ServiceExports = slices.DeleteFunc(c.ServiceExports, func(o mcsv1alpha1.ServiceExport) bool { return o.Namespace == ns && o.Name == name })
	c.Services = slices.DeleteFunc(c.Services, func(o corev1.Service) bool { return o.Namespace == ns && o.Name == name })
	for _, e := range before {
		if e.Member != c.Member {
			continue
		}
		c.ServiceExports = append(c.ServiceExports, *e.ServiceExport)
		if e.Service != nil {
			c.Services = append(c.Services, *e.Service)
		}
	}
}
