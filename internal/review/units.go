// SPDX-License-Identifier: Apache-2.0

package review

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// unitKind is what a unit is a difference in.
type unitKind string

const (
	unitExport unitKind = "export"
	unitImport unitKind = "import"
	unitPolicy unitKind = "policy"
)

// unit is one structural difference between the approved and the live
// world: one member's export of one service, one member's import of one
// service, or one member's traffic policy. live and approved are digests
// of each side, empty where that side has none.
type unit struct {
	kind           unitKind
	member         string
	ns, name       string
	live, approved string
}

func (u unit) String() string {
	return fmt.Sprintf("%s %s %s/%s %s", u.kind, u.member, u.ns, u.name, u.live)
}

func (u unit) service() string { return u.ns + "/" + u.name }

// findUnits lists every structural difference, sorted. Exports and
// policies are compared by digest of the snapshots; imports by whether the
// live world's render imports a service into a member that the approved
// report does not list as an importer. An import that goes away is not a
// unit: it follows from a withdrawal (itself held) or from the member's
// namespace being deleted, which nothing can hold.
func findUnits(live []*snapshot.Snapshot, approved map[string]*snapshot.Snapshot, approvedImports map[render.ImportKey]bool, full *render.Report) []unit {
	var out []unit
	for _, s := range live {
		a := approved[s.Member]
		le, ae := exportDigests(s), exportDigests(a)
		for _, k := range unionKeys(le, ae) {
			if le[k] != ae[k] {
				ns, name := splitKey(k)
				out = append(out, unit{kind: unitExport, member: s.Member, ns: ns, name: name, live: le[k], approved: ae[k]})
			}
		}
		lp, ap := policyDigests(s), policyDigests(a)
		for _, k := range unionKeys(lp, ap) {
			if lp[k] != ap[k] {
				ns, name := splitKey(k)
				out = append(out, unit{kind: unitPolicy, member: s.Member, ns: ns, name: name, live: lp[k], approved: ap[k]})
			}
		}
	}
	for _, svc := range full.Services {
		for _, m := range svc.ImportedBy {
			if !approvedImports[render.ImportKey{Member: m, Namespace: svc.Namespace, Name: svc.Name}] {
				out = append(out, unit{kind: unitImport, member: m, ns: svc.Namespace, name: svc.Name, live: "imported"})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// exportDigests gives, per namespace/name a member exports, a digest of
// what decides who reaches what: the ServiceExport (its creation time
// decides conflicts), the normalized Service (type, ports, affinity,
// families) and whether objects of it were left out as unloadable.
// EndpointSlices are left out: endpoints are churn.
func exportDigests(s *snapshot.Snapshot) map[string]string {
	out := map[string]string{}
	if s == nil {
		return out
	}
	type export struct {
		Export   any
		Service  any
		Rejected []snapshot.Rejected
	}
	parts := map[string]*export{}
	for i := range s.ServiceExports {
		se := &s.ServiceExports[i]
		if se.DeletionTimestamp != nil {
			continue // withdrawn
		}
		parts[se.Namespace+"/"+se.Name] = &export{Export: []any{se.Name, se.Namespace, se.CreationTimestamp, se.Spec}}
	}
	for i := range s.Services {
		svc := &s.Services[i]
		if p := parts[svc.Namespace+"/"+svc.Name]; p != nil {
			p.Service = svc.Spec
		}
	}
	for _, r := range s.Rejected {
		k := r.Namespace + "/" + r.Service
		if p := parts[k]; p != nil {
			p.Rejected = append(p.Rejected, r)
		} else if r.Kind == "ServiceExport" {
			parts[k] = &export{Rejected: []snapshot.Rejected{r}}
		}
	}
	for k, p := range parts {
		out[k] = digest(p)
	}
	return out
}

// policyDigests gives a digest of each GlobalTrafficPolicy's spec by
// namespace/name.
func policyDigests(s *snapshot.Snapshot) map[string]string {
	out := map[string]string{}
	if s == nil {
		return out
	}
	for _, p := range s.GlobalTrafficPolicies {
		out[p.Namespace+"/"+p.Name] = digest(p.Spec)
	}
	return out
}

// slicesOf reports whether sl is one of the member's own EndpointSlices of
// namespace/name (never one mcs-gitops imported).
func slicesOf(sl *discoveryv1.EndpointSlice, ns, name string) bool {
	return sl.Namespace == ns && sl.Labels[discoveryv1.LabelServiceName] == name &&
		sl.Labels[discoveryv1.LabelManagedBy] != render.EndpointSliceManager
}

func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Every value here is a plain API struct; marshalling cannot fail.
		panic(fmt.Sprintf("review: digest: %v", err))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func splitKey(k string) (ns, name string) {
	ns, name, _ = strings.Cut(k, "/")
	return ns, name
}

// ServiceDigest is a digest of every member's export of namespace/name in
// snaps: it changes when any export of the service does, and churn leaves
// it alone. A declined import stands while it is the same.
func ServiceDigest(snaps []*snapshot.Snapshot, ns, name string) string {
	parts := map[string]string{}
	for _, s := range snaps {
		if d, ok := exportDigests(s)[ns+"/"+name]; ok {
			parts[s.Member] = d
		}
	}
	return digest(parts)
}
