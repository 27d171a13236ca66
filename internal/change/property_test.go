// SPDX-License-Identifier: Apache-2.0

package change

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// randomReport makes a report from a small pool of services, members,
// ports and values, so that two of them overlap in every way a change
// can: the same service on both sides with other importers, exports,
// fields, conflicts, policies and counts.
func randomReport(r *rand.Rand) *render.Report {
	members := []string{"cluster-1", "cluster-2", "cluster-3", "cluster-4"}
	some := func() []string {
		var out []string
		for _, m := range members {
			if r.IntN(2) == 0 {
				out = append(out, m)
			}
		}
		return out
	}
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	rep := &render.Report{}
	for _, ns := range []string{"shop", "web"} {
		for _, name := range []string{"cart", "frontend", "svc2", "svc10"} {
			if r.IntN(3) == 0 {
				continue
			}
			s := render.ServiceReport{Namespace: ns, Name: name, Type: pick("ClusterSetIP", "Headless"), ImportedBy: some()}
			for _, m := range s.ImportedBy {
				if r.IntN(4) == 0 {
					s.CreatedNamespace = append(s.CreatedNamespace, m)
				}
				if r.IntN(5) == 0 {
					s.NotServed = append(s.NotServed, render.NotServed{Member: m, Reason: render.ReasonIPFamilyNotSupported})
				}
			}
			for _, m := range some() {
				e := render.ExportReport{Member: m, ClusterID: m}
				if r.IntN(4) == 0 {
					e.Conditions = append(e.Conditions, render.Condition{Type: "Valid", Status: "False", Reason: pick("NoService", "InvalidServiceType")})
				} else {
					e.Conditions = append(e.Conditions, render.Condition{Type: "Valid", Status: "True", Reason: "Valid"})
					if r.IntN(3) == 0 {
						e.Conditions = append(e.Conditions, render.Condition{Type: "Conflict", Status: "True", Reason: pick("PortConflict", "TypeConflict"), Message: "m"})
					}
				}
				s.Exports = append(s.Exports, e)
			}
			if r.IntN(4) > 0 {
				imp := &render.ImportSpec{SessionAffinity: pick("None", "ClientIP"), IPFamilies: []string{pick("IPv4", "IPv6")}}
				for _, p := range []string{"http", "grpc", ""} {
					if r.IntN(2) == 0 {
						imp.Ports = append(imp.Ports, render.ImportPort{Name: p, Port: int32(8000 + r.IntN(2)), Protocol: pick("TCP", "UDP")})
					}
				}
				if r.IntN(2) == 0 {
					imp.ExportedLabels = map[string]string{"team": pick("a", "b")}
				}
				s.Import = imp
			}
			for _, m := range some() {
				if r.IntN(2) == 0 {
					p := render.PolicyReport{Member: m, LbType: pick("Locality", "FailOver", "ActiveActive"), Clusters: some()}
					if r.IntN(2) == 0 {
						p.Weights = map[string]int32{"cluster-1": int32(r.IntN(3)), "cluster-2": 1}
					}
					s.Policies = append(s.Policies, p)
				}
			}
			if len(s.Exports) > 0 {
				s.Endpoints = map[string]int{}
				for _, e := range s.Exports {
					s.Endpoints[e.Member] = r.IntN(3)
				}
			}
			rep.Services = append(rep.Services, s)
		}
	}
	for _, m := range some() {
		g := render.GatewayReport{Member: m, Gateway: "gateway-system/" + pick("east-west", "mesh"),
			Addresses: []string{pick("203.0.113.1", "203.0.113.2")}, HTTPPort: int32(pick2(r, 80, 8080)), TCPPorts: pick("", "30000-30009")}
		for _, svc := range []string{"cart", "db"} {
			if r.IntN(2) == 0 {
				g.Allocations = append(g.Allocations, render.PortAllocation{Port: int32(30000 + r.IntN(3)), Namespace: "shop", Service: svc,
					ServicePort: 5432, Purpose: pick("", render.PurposeWeighted)})
			}
		}
		rep.Gateways = append(rep.Gateways, g)
	}
	return rep
}

func pick2(r *rand.Rand, a, b int) int {
	if r.IntN(2) == 0 {
		return a
	}
	return b
}

// FuzzInverse: for any two renders A and B, the change from B to A is the
// inverse of the change from A to B, the change from A to A is empty, and
// applying the change from A to B to A's reach gives B's.
func FuzzInverse(f *testing.F) {
	for i := range uint64(20) {
		f.Add(i, i*7919+1)
	}
	f.Fuzz(func(t *testing.T, seedA, seedB uint64) {
		a := randomReport(rand.New(rand.NewPCG(seedA, 1)))
		b := randomReport(rand.New(rand.NewPCG(seedB, 2)))
		ab, ba := Between(a, b), Between(b, a)
		if !reflect.DeepEqual(ba, ab.Inverse()) {
			t.Fatalf("B->A is not the inverse of A->B\nA->B inverted: %+v\nB->A:          %+v", ab.Inverse(), ba)
		}
		if got := Between(a, a); len(got.Services) != 0 || len(got.Gateways) != 0 {
			t.Fatalf("A->A is not empty: %+v", got)
		}
		if got, want := ab.Apply(ReachOf(a)), ReachOf(b); !reflect.DeepEqual(got, want) {
			t.Fatalf("A's reach after A->B:\n%v\nB's reach:\n%v", got, want)
		}
		if got, want := ab.Inverse().Apply(ReachOf(b)), ReachOf(a); !reflect.DeepEqual(got, want) {
			t.Fatalf("B's reach after the inverse: %v, want A's %v", got, want)
		}
		if ab.Apply(ReachOf(nil)) == nil || len(Between(nil, nil).Services) != 0 {
			t.Fatal("nothing rendered on either side")
		}
		ma, mb := memberStates(seedA), memberStates(seedB)
		if got, want := (Set{Members: MembersBetween(mb, ma)}), (Set{Members: MembersBetween(ma, mb)}).Inverse(); !reflect.DeepEqual(got.Members, want.Members) {
			t.Fatalf("members B->A %v, inverse of A->B %v", got.Members, want.Members)
		}
	})
}

// memberStates is a ClusterSet's members, some of cluster-1..cluster-5,
// each reachable, unreachable or stale.
func memberStates(seed uint64) map[string]MemberState {
	out := map[string]MemberState{}
	for i := range 5 {
		if seed>>i&1 == 1 {
			out["cluster-"+string(rune('1'+i))] = []MemberState{Reachable, Unreachable, Stale}[seed>>(5+2*i)%3]
		}
	}
	return out
}
