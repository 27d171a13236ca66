// SPDX-License-Identifier: Apache-2.0

package review

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

var members = []string{"cluster-1", "cluster-2", "cluster-3"}

func clusterSet() *v1alpha1.ClusterSet {
	cs := &v1alpha1.ClusterSet{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind, Metadata: v1alpha1.Metadata{Name: "test"}}
	for _, m := range members {
		cs.Spec.Members = append(cs.Spec.Members, v1alpha1.Member{Name: m})
	}
	cs.Default()
	return cs
}

// world is a builder of member snapshots: every member has the shop
// namespace unless told otherwise.
type world map[string]*snapshot.Snapshot

func newWorld() world {
	w := world{}
	for _, m := range members {
		w[m] = &snapshot.Snapshot{Member: m, Namespaces: []corev1.Namespace{*tenant.Namespace("shop")}}
	}
	return w
}

// export makes member export shop/<name> on the given ports with the
// given ready endpoint addresses, created at minute created.
func (w world) export(member, name string, created int, ports []corev1.ServicePort, ready ...string) world {
	s := w[member]
	se := tenant.Export("shop", name)
	se.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 1, 0, created, 0, 0, time.UTC))
	svc := tenant.Service("shop", name, ports...)
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	s.ServiceExports = append(s.ServiceExports, *se)
	s.Services = append(s.Services, *svc)
	s.EndpointSlices = append(s.EndpointSlices, *tenant.Slice(svc, name+"-"+member, discoveryv1.AddressTypeIPv4, tenant.Ready(ready...)...))
	return w
}

func (w world) policy(member, name string, lb v1alpha1.LoadBalancerType, targets ...string) world {
	p := v1alpha1.GlobalTrafficPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	p.APIVersion, p.Kind = v1alpha1.SchemeGroupVersion.String(), v1alpha1.GlobalTrafficPolicyKind
	p.Spec.LbType = lb
	for _, t := range targets {
		p.Spec.Targets = append(p.Spec.Targets, v1alpha1.TrafficTarget{ClusterKey: "//default/" + t})
	}
	w[member].GlobalTrafficPolicies = append(w[member].GlobalTrafficPolicies, p)
	return w
}

// normalized gives the snapshots as a live read (or a committed file)
// gives them.
func (w world) normalized(t *testing.T) []*snapshot.Snapshot {
	t.Helper()
	var out []*snapshot.Snapshot
	for _, m := range members {
		s, ok := w[m]
		if !ok {
			continue
		}
		_, n, err := snapshot.Normalize(s, m+".yaml")
		require.NoError(t, err)
		out = append(out, n)
	}
	return out
}

var http = []corev1.ServicePort{tenant.HTTP()}

// approvedFrom renders approved and gives what Split reads of a branch
// whose last commit is that world: its snapshots and its importers.
func approvedFrom(t *testing.T, approved []*snapshot.Snapshot) (map[string]*snapshot.Snapshot, map[render.ImportKey]bool) {
	t.Helper()
	out, err := render.Render(clusterSet(), approved, nil)
	require.NoError(t, err)
	snaps := map[string]*snapshot.Snapshot{}
	for _, s := range approved {
		snaps[s.Member] = s
	}
	return snaps, importsOf(&out.Report)
}

func importsOf(r *render.Report) map[render.ImportKey]bool {
	imports := map[render.ImportKey]bool{}
	for _, s := range r.Services {
		for _, m := range s.ImportedBy {
			imports[render.ImportKey{Member: m, Namespace: s.Namespace, Name: s.Name}] = true
		}
	}
	return imports
}

type splitRun struct {
	plan    *Plan
	renders int
}

func split(t *testing.T, approved, live []*snapshot.Snapshot, kinds []Kind, rejected map[string]string) splitRun {
	t.Helper()
	snaps, imports := approvedFrom(t, approved)
	var r splitRun
	p, err := Split(Input{
		Live: live, Approved: snaps, ApprovedImports: imports, Review: kinds, Rejected: rejected,
		Render: func(w World) (*render.Output, error) {
			r.renders++
			return render.RenderWith(clusterSet(), w.Snapshots, render.Options{Held: w.Held})
		},
	})
	require.NoError(t, err)
	r.plan = p
	return r
}

func service(t *testing.T, out *render.Output, name string) render.ServiceReport {
	t.Helper()
	for _, s := range out.Report.Services {
		if s.Namespace == "shop" && s.Name == name {
			return s
		}
	}
	return render.ServiceReport{}
}

// proposalNames are the names of p's proposals. Each must be one the
// loop can record on the branch and read back: layout checks the shape of
// every recorded name, and a name it refused would stop every cycle.
func proposalNames(t *testing.T, p *Plan) []string {
	t.Helper()
	var out []string
	for _, x := range p.Proposals {
		record := fmt.Sprintf("proposals:\n- name: %s\n  branch: %s\n", x.Name, layout.ProposalBranch(x.Name))
		_, err := layout.ParseReviewState([]byte(record))
		require.NoError(t, err, "the loop could not read back its record of %s", x.Name)
		out = append(out, x.Name)
	}
	return out
}

func readyEndpoints(out *render.Output, member, service string) []string {
	var addrs []string
	for _, m := range out.Members {
		if m.Name != member {
			continue
		}
		for _, o := range m.Objects {
			sl, ok := o.Object.(*discoveryv1.EndpointSlice)
			if !ok || sl.Labels[discoveryv1.LabelServiceName] == "" {
				continue
			}
			for _, e := range sl.Endpoints {
				if o.Path != "" && containsService(o.Path, service) {
					addrs = append(addrs, e.Addresses...)
				}
			}
		}
	}
	slices.Sort(addrs)
	return addrs
}

func containsService(path, service string) bool {
	return len(path) > len("shop/"+service) && path[:len("shop/"+service)] == "shop/"+service
}

func TestNothingStructuralChangedRendersOnce(t *testing.T) {
	approved := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	// Churn: a second ready endpoint, and the first one not ready.
	live := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.6", "10.244.1.7").normalized(t)
	r := split(t, approved, live, AllKinds, nil)
	assert.Empty(t, r.plan.Proposals)
	assert.Equal(t, 1, r.renders, "churn alone costs one render, as without review")
	assert.Equal(t, live, r.plan.Branch.Snapshots)
	assert.Equal(t, []string{"10.244.1.6", "10.244.1.7"}, readyEndpoints(r.plan.BranchOutput, "cluster-2", "cart"))
}

func TestANewExportWaitsWithItsImports(t *testing.T) {
	approved := newWorld().normalized(t)
	live := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	r := split(t, approved, live, AllKinds, nil)
	require.Equal(t, []string{"service/shop/cart"}, proposalNames(t, r.plan))
	p := r.plan.Proposals[0]
	assert.Equal(t, []Kind{KindExport, KindImport}, p.Kinds)
	assert.Equal(t, []ExportRef{{Member: "cluster-1", Namespace: "shop", Name: "cart", New: true}}, p.Exports)
	assert.Contains(t, p.Summary, "cluster-1 exports shop/cart")
	assert.Contains(t, p.Summary, "cluster-2 imports shop/cart")

	assert.Empty(t, service(t, r.plan.BranchOutput, "cart").ImportedBy, "the branch imports nothing until the proposal is merged")
	assert.Equal(t, members, service(t, p.Output, "cart").ImportedBy)
	assert.Equal(t, []string{"10.244.1.5"}, readyEndpoints(p.Output, "cluster-2", "cart"))
}

func TestOnlyTheConfiguredKindsWait(t *testing.T) {
	approved := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	// cluster-3 starts exporting cart too, on another port: the ports
	// are merged and the differing one is a conflict.
	live := newWorld().
		export("cluster-1", "cart", 0, http, "10.244.1.5").
		export("cluster-3", "cart", 5, []corev1.ServicePort{tenant.Port("http", 81, 8080)}, "10.244.3.5").normalized(t)

	r := split(t, approved, live, AllKinds, nil)
	require.Equal(t, []string{"service/shop/cart"}, proposalNames(t, r.plan))
	assert.Equal(t, []Kind{KindExport, KindConflict}, r.plan.Proposals[0].Kinds, "everyone already imports cart: no Import")

	r = split(t, approved, live, []Kind{KindConflict}, nil)
	assert.Len(t, r.plan.Proposals, 1, "a conflict waits when Conflict is reviewed")

	r = split(t, approved, live, []Kind{KindImport, KindMember}, nil)
	assert.Empty(t, r.plan.Proposals, "neither an import nor a member: straight to the branch")
	assert.Equal(t, live, r.plan.Branch.Snapshots)
	full, err := render.Render(clusterSet(), live, nil)
	require.NoError(t, err)
	assert.Equal(t, full, r.plan.BranchOutput)
}

func TestChurnFlowsWhileAChangeWaits(t *testing.T) {
	approved := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	live := newWorld().
		export("cluster-1", "cart", 0, http, "10.244.1.8", "10.244.1.9").
		export("cluster-3", "cart", 5, http, "10.244.3.5").normalized(t)
	r := split(t, approved, live, AllKinds, nil)
	require.Equal(t, []string{"service/shop/cart"}, proposalNames(t, r.plan))
	assert.Equal(t, []Kind{KindExport}, r.plan.Proposals[0].Kinds)
	assert.Equal(t, []string{"10.244.1.8", "10.244.1.9"}, readyEndpoints(r.plan.BranchOutput, "cluster-2", "cart"),
		"cluster-1's new endpoints reach the branch; cluster-3's wait")
	assert.Equal(t, []string{"10.244.1.8", "10.244.1.9", "10.244.3.5"}, readyEndpoints(r.plan.Proposals[0].Output, "cluster-2", "cart"))
}

func TestAWithdrawalWaitsWithTheLastApprovedEndpoints(t *testing.T) {
	approved := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	live := newWorld().normalized(t)
	r := split(t, approved, live, AllKinds, nil)
	require.Equal(t, []string{"service/shop/cart"}, proposalNames(t, r.plan))
	p := r.plan.Proposals[0]
	assert.Equal(t, []Kind{KindWithdrawal}, p.Kinds)
	assert.Equal(t, members, service(t, r.plan.BranchOutput, "cart").ImportedBy)
	assert.Equal(t, []string{"10.244.1.5"}, readyEndpoints(r.plan.BranchOutput, "cluster-2", "cart"))
	assert.Empty(t, service(t, p.Output, "cart").ImportedBy)

	r = split(t, approved, live, []Kind{KindExport, KindImport}, nil)
	assert.Empty(t, r.plan.Proposals, "withdrawals not reviewed: gone at once")
	assert.Empty(t, service(t, r.plan.BranchOutput, "cart").ImportedBy)
}

func TestANewNamespaceImportsThroughItsOwnProposal(t *testing.T) {
	approvedWorld := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5")
	approvedWorld["cluster-2"].Namespaces = []corev1.Namespace{*tenant.Namespace("other")}
	approved := approvedWorld.normalized(t)
	liveWorld := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.6")
	liveWorld["cluster-2"].Namespaces = append(liveWorld["cluster-2"].Namespaces, *tenant.Namespace("other"))
	live := liveWorld.normalized(t)
	r := split(t, approved, live, AllKinds, nil)
	require.Equal(t, []string{"import/cluster-2/shop"}, proposalNames(t, r.plan))
	assert.Equal(t, []Kind{KindImport}, r.plan.Proposals[0].Kinds)
	assert.True(t, r.plan.Branch.Held[render.ImportKey{Member: "cluster-2", Namespace: "shop", Name: "cart"}])
	cart := service(t, r.plan.BranchOutput, "cart")
	assert.Equal(t, []string{"cluster-1", "cluster-3"}, cart.ImportedBy)
	assert.Equal(t, []string{"cluster-2"}, cart.HeldImports)
	assert.Equal(t, []string{"10.244.1.6"}, readyEndpoints(r.plan.BranchOutput, "cluster-3", "cart"))
}

func TestANewMemberIsOneProposal(t *testing.T) {
	approvedWorld := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5")
	delete(approvedWorld, "cluster-3")
	approvedSnaps := approvedWorld.normalized(t)
	// The approved branch rendered without cluster-3 at all.
	approved := append(approvedSnaps, &snapshot.Snapshot{Member: "cluster-3"})
	live := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").export("cluster-3", "shoes", 0, http, "10.244.3.5").normalized(t)

	snaps, imports := approvedFrom(t, approved)
	delete(snaps, "cluster-3") // the branch holds no inputs/cluster-3.yaml
	p, err := Split(Input{Live: live, Approved: snaps, ApprovedImports: imports, Review: AllKinds,
		Render: func(w World) (*render.Output, error) {
			return render.RenderWith(clusterSet(), w.Snapshots, render.Options{Held: w.Held})
		}})
	require.NoError(t, err)
	require.Equal(t, []string{"member/cluster-3"}, proposalNames(t, p))
	assert.Equal(t, []Kind{KindMember, KindExport, KindImport}, p.Proposals[0].Kinds)
	assert.Equal(t, []string{"cluster-1", "cluster-2"}, service(t, p.BranchOutput, "cart").ImportedBy)
	assert.Empty(t, service(t, p.BranchOutput, "shoes").ImportedBy)
	assert.Equal(t, members, service(t, p.Proposals[0].Output, "shoes").ImportedBy)
}

func TestARejectedChangeIsNotProposedAgainUntilItChanges(t *testing.T) {
	approved := newWorld().normalized(t)
	live := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	first := split(t, approved, live, AllKinds, nil).plan.Proposals[0]

	r := split(t, approved, live, AllKinds, map[string]string{first.Name: first.Digest})
	require.Len(t, r.plan.Proposals, 1)
	assert.True(t, r.plan.Proposals[0].Rejected)
	assert.Nil(t, r.plan.Proposals[0].Output)
	assert.Empty(t, service(t, r.plan.BranchOutput, "cart").ImportedBy, "still held")

	// Churn does not change the digest...
	churned := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.9").normalized(t)
	assert.True(t, split(t, approved, churned, AllKinds, map[string]string{first.Name: first.Digest}).plan.Proposals[0].Rejected)
	// ...a new port does.
	changed := newWorld().export("cluster-1", "cart", 0, []corev1.ServicePort{tenant.HTTP(), tenant.Port("grpc", 9090, 9090)}, "10.244.1.5").normalized(t)
	again := split(t, approved, changed, AllKinds, map[string]string{first.Name: first.Digest}).plan.Proposals[0]
	assert.False(t, again.Rejected)
	assert.NotEqual(t, first.Digest, again.Digest)
}

func TestAPolicyIsItsOwnProposal(t *testing.T) {
	base := func() world {
		return newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").export("cluster-3", "cart", 1, http, "10.244.3.5")
	}
	approved := base().normalized(t)
	live := base().policy("cluster-2", "cart", v1alpha1.FailOver, "cluster-3").normalized(t)
	r := split(t, approved, live, AllKinds, nil)
	require.Equal(t, []string{"policy/cluster-2/shop/cart"}, proposalNames(t, r.plan))
	p := r.plan.Proposals[0]
	assert.Equal(t, []Kind{KindPolicy}, p.Kinds)
	assert.Contains(t, p.Summary, "cluster-2 creates GlobalTrafficPolicy shop/cart")
	assert.Equal(t, []string{"10.244.1.5", "10.244.3.5"}, readyEndpoints(r.plan.BranchOutput, "cluster-2", "cart"), "no policy yet: both")
	assert.Equal(t, []string{"10.244.3.5"}, readyEndpoints(p.Output, "cluster-2", "cart"))
}

func TestSplitIsDeterministic(t *testing.T) {
	approved := newWorld().normalized(t)
	live := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").export("cluster-2", "shoes", 0, http, "10.244.2.5").
		policy("cluster-3", "cart", v1alpha1.FailOver, "cluster-1").normalized(t)
	a := split(t, approved, live, AllKinds, nil).plan
	b := split(t, approved, live, AllKinds, nil).plan
	require.Equal(t, proposalNames(t, a), proposalNames(t, b))
	assert.Equal(t, []string{"policy/cluster-3/shop/cart", "service/shop/cart", "service/shop/shoes"}, proposalNames(t, a))
	for i := range a.Proposals {
		assert.Equal(t, a.Proposals[i].Digest, b.Proposals[i].Digest)
		assert.Equal(t, a.Proposals[i].Summary, b.Proposals[i].Summary)
	}
}

func TestAHeldChangeKeepsTheApprovedShapeWithLiveEndpoints(t *testing.T) {
	approved := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	// cluster-1 adds a port (structural) while its pods roll (churn).
	grpc := []corev1.ServicePort{tenant.HTTP(), tenant.Port("grpc", 9090, 9090)}
	live := newWorld().export("cluster-1", "cart", 0, grpc, "10.244.1.8").normalized(t)
	r := split(t, approved, live, AllKinds, nil)
	require.Equal(t, []string{"service/shop/cart"}, proposalNames(t, r.plan))
	p := r.plan.Proposals[0]
	assert.Equal(t, []Kind{KindExport}, p.Kinds)
	assert.Equal(t, []ExportRef{{Member: "cluster-1", Namespace: "shop", Name: "cart"}}, p.Exports)
	assert.Contains(t, p.Summary, "cluster-1 changes what it exports of shop/cart")

	portsOf := func(out *render.Output) []int32 {
		var ports []int32
		for _, m := range out.Members {
			for _, o := range m.Objects {
				if si, ok := o.Object.(*mcsv1alpha1.ServiceImport); ok && m.Name == "cluster-2" {
					for _, p := range si.Spec.Ports {
						ports = append(ports, p.Port)
					}
				}
			}
		}
		return ports
	}
	assert.Equal(t, []int32{80}, portsOf(r.plan.BranchOutput), "the branch keeps the approved ports")
	assert.Equal(t, []string{"10.244.1.8"}, readyEndpoints(r.plan.BranchOutput, "cluster-2", "cart"), "with the live endpoints")
	assert.Equal(t, []int32{80, 9090}, portsOf(p.Output))
}

func TestADeclinedImportStaysOutUntilTheServiceChanges(t *testing.T) {
	approved := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	snaps, imports := approvedFrom(t, approved)
	key := render.ImportKey{Member: "cluster-2", Namespace: "shop", Name: "cart"}
	delete(imports, key) // a person took cluster-2's import out of the merged proposal
	run := func(live []*snapshot.Snapshot) *Plan {
		p, err := Split(Input{Live: live, Approved: snaps, ApprovedImports: imports, Review: AllKinds,
			Declined: map[render.ImportKey]string{key: ServiceDigest(approved, "shop", "cart")},
			Render: func(w World) (*render.Output, error) {
				return render.RenderWith(clusterSet(), w.Snapshots, render.Options{Held: w.Held})
			}})
		require.NoError(t, err)
		return p
	}

	churned := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.9").normalized(t)
	p := run(churned)
	assert.Empty(t, p.Proposals, "declined: not proposed again")
	assert.Contains(t, p.Declined, key)
	cart := service(t, p.BranchOutput, "cart")
	assert.Equal(t, []string{"cluster-1", "cluster-3"}, cart.ImportedBy)
	assert.Equal(t, []string{"cluster-2"}, cart.HeldImports)
	assert.Equal(t, []string{"10.244.1.9"}, readyEndpoints(p.BranchOutput, "cluster-3", "cart"), "churn still flows")

	grpc := []corev1.ServicePort{tenant.HTTP(), tenant.Port("grpc", 9090, 9090)}
	changed := newWorld().export("cluster-1", "cart", 0, grpc, "10.244.1.9").normalized(t)
	p = run(changed)
	assert.NotContains(t, p.Declined, key, "the service changed: the decline is over")
	require.Equal(t, []string{"service/shop/cart"}, proposalNames(t, p))
	assert.Contains(t, p.Proposals[0].Summary, "cluster-2 imports shop/cart")
}

func TestATCPPortOnAGatewayIsAGatewayChange(t *testing.T) {
	cs := clusterSet()
	for i := range cs.Spec.Members {
		m := &cs.Spec.Members[i]
		m.Mode = v1alpha1.ModeGateway
		m.Gateway = &v1alpha1.Gateway{Host: fmt.Sprintf("192.0.2.%d", i+1), Port: 80, Namespace: "gw", Name: "east-west",
			TCPPorts: &v1alpha1.PortRange{From: 30000, To: 30009}}
	}
	rend := func(w World) (*render.Output, error) {
		return render.RenderWith(cs, w.Snapshots, render.Options{Held: w.Held})
	}
	approved := newWorld().export("cluster-1", "cart", 0, http, "10.244.1.5").normalized(t)
	base, err := rend(World{Snapshots: approved})
	require.NoError(t, err)
	snaps := map[string]*snapshot.Snapshot{}
	for _, s := range approved {
		snaps[s.Member] = s
	}
	withTCP := []corev1.ServicePort{tenant.HTTP(), tenant.Port("postgres", 5432, 5432)}
	live := newWorld().export("cluster-1", "cart", 0, withTCP, "10.244.1.5").normalized(t)
	p, err := Split(Input{Live: live, Approved: snaps, ApprovedImports: importsOf(&base.Report), Review: AllKinds, Render: rend})
	require.NoError(t, err)
	require.Equal(t, []string{"service/shop/cart"}, proposalNames(t, p))
	assert.Equal(t, []Kind{KindExport, KindGateway}, p.Proposals[0].Kinds, "the TCP port takes a listener on cluster-1's gateway")
	assert.Empty(t, p.BranchOutput.Report.Gateways[0].Allocations, "no listener until the proposal is merged")

	p, err = Split(Input{Live: live, Approved: snaps, ApprovedImports: importsOf(&base.Report), Review: []Kind{KindGateway}, Render: rend})
	require.NoError(t, err)
	assert.Len(t, p.Proposals, 1, "reviewing only gateway allocations still holds it")
	p, err = Split(Input{Live: live, Approved: snaps, ApprovedImports: importsOf(&base.Report), Review: []Kind{KindImport}, Render: rend})
	require.NoError(t, err)
	assert.Empty(t, p.Proposals)
	assert.NotEmpty(t, p.BranchOutput.Report.Gateways[0].Allocations)
}
