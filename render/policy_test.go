// SPDX-License-Identifier: Apache-2.0

package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func policy(lb v1alpha1.LoadBalancerType, targets ...v1alpha1.TrafficTarget) v1alpha1.GlobalTrafficPolicy {
	return v1alpha1.GlobalTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "site"},
		Spec:       v1alpha1.GlobalTrafficPolicySpec{LbType: lb, Targets: targets},
	}
}

func target(member string, weight ...int32) v1alpha1.TrafficTarget {
	t := v1alpha1.TrafficTarget{ClusterKey: "//default/" + member}
	if len(weight) > 0 {
		t.Weight = &weight[0]
	}
	return t
}

// fsmWorld is the FSM demo's shape: web/site exported from c1 and c3 with
// the given readiness, consumed by c2, which exports it too when local is
// not nil, and has the policy pol.
func fsmWorld(t *testing.T, ready1, ready3 bool, local *bool, pol *v1alpha1.GlobalTrafficPolicy) []*snapshot.Snapshot {
	http := corev1.ServicePort{Name: "http", Port: 8080}
	c1, c2, c3 := &snapshot.Snapshot{Member: "c1"}, &snapshot.Snapshot{Member: "c2"}, &snapshot.Snapshot{Member: "c3"}
	exportService(t, c1, "web", "site", "2026-01-01T00:00:00Z", ready1, http)
	exportService(t, c3, "web", "site", "2026-01-02T00:00:00Z", ready3, http)
	if local != nil {
		exportService(t, c2, "web", "site", "2026-01-03T00:00:00Z", *local, http)
	} else {
		c2.Namespaces = []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "web"}}}
	}
	if pol != nil {
		c2.GlobalTrafficPolicies = []v1alpha1.GlobalTrafficPolicy{*pol}
	}
	return []*snapshot.Snapshot{c1, c2, c3}
}

// sourcesIn lists the source clusters of the derived Service's slices in
// member m.
func sourcesIn(t *testing.T, out *Output, m string) []string {
	t.Helper()
	var got []string
	for _, o := range objectsOfKind(out, m, "EndpointSlice") {
		sl := o.Object.(*discoveryv1.EndpointSlice)
		if sl.Labels[discoveryv1.LabelServiceName] == DerivedServiceName("web", "site") {
			got = append(got, sl.Labels[mcsv1alpha1.LabelSourceCluster])
		}
	}
	return got
}

func TestPolicySemantics(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name           string
		ready1, ready3 bool
		local          *bool
		pol            *v1alpha1.GlobalTrafficPolicy
		want           []string
		applied        string
	}{
		{name: "no policy uses every exporter", ready1: true, ready3: true, want: []string{"c1", "c3"}},
		{name: "Locality without a local export gets nothing", ready1: true, ready3: true,
			pol: ptr.To(policy(v1alpha1.Locality)), want: nil, applied: ReasonApplied},
		{name: "Locality keeps the local endpoints", ready1: true, ready3: true, local: &yes,
			pol: ptr.To(policy(v1alpha1.Locality)), want: []string{"c2"}, applied: ReasonApplied},
		{name: "Locality with a target pins it", ready1: true, ready3: true, local: &yes,
			pol: ptr.To(policy(v1alpha1.Locality, target("c3"))), want: []string{"c3"}, applied: ReasonApplied},
		{name: "FailOver stays local while a local endpoint is ready", ready1: true, ready3: true, local: &yes,
			pol: ptr.To(policy(v1alpha1.FailOver, target("c1"), target("c3"))), want: []string{"c2"}, applied: ReasonApplied},
		// FSM gives failover targets no order: with no ready local endpoint,
		// every target with a ready endpoint takes traffic.
		{name: "FailOver spreads over every ready target when local is not ready", ready1: true, ready3: true, local: &no,
			pol: ptr.To(policy(v1alpha1.FailOver, target("c1"), target("c3"))), want: []string{"c1", "c3"}, applied: ReasonApplied},
		{name: "FailOver without a local export spreads over the ready targets", ready1: true, ready3: true,
			pol: ptr.To(policy(v1alpha1.FailOver, target("c3"), target("c1"))), want: []string{"c1", "c3"}, applied: ReasonApplied},
		// FSM's CRD defaults lbType to Locality.
		{name: "no lbType means Locality", ready1: true, ready3: true, local: &yes,
			pol: ptr.To(policy("")), want: []string{"c2"}, applied: ReasonApplied},
		{name: "FailOver skips a target without ready endpoints", ready1: false, ready3: true, local: &no,
			pol: ptr.To(policy(v1alpha1.FailOver, target("c1"), target("c3"))), want: []string{"c3"}, applied: ReasonApplied},
		{name: "ActiveActive without targets is every exporter", ready1: true, ready3: true, local: &yes,
			pol: ptr.To(policy(v1alpha1.ActiveActive)), want: []string{"c1", "c2", "c3"}, applied: ReasonApplied},
		{name: "ActiveActive with targets is local plus targets", ready1: true, ready3: true, local: &yes,
			pol: ptr.To(policy(v1alpha1.ActiveActive, target("c3"))), want: []string{"c2", "c3"}, applied: ReasonApplied},
		{name: "an invalid policy is not applied", ready1: true, ready3: true,
			pol: ptr.To(policy(v1alpha1.Locality, target("c1"), target("c3"))), want: []string{"c1", "c3"}, applied: ReasonInvalidPolicy},
		{name: "unknown targets are reported and skipped", ready1: true, ready3: true,
			pol: ptr.To(policy(v1alpha1.FailOver, v1alpha1.TrafficTarget{ClusterKey: "eu/z/default/gone"}, target("c3"))), want: []string{"c3"}, applied: ReasonUnknownTargets},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Render(clusterSetOf("c1", "c2", "c3"), fsmWorld(t, c.ready1, c.ready3, c.local, c.pol), nil)
			require.NoError(t, err)
			assert.ElementsMatch(t, c.want, sourcesIn(t, out, "c2"))
			rep := serviceReport(t, out, "web", "site")
			if c.pol == nil {
				assert.Empty(t, rep.Policies)
				return
			}
			require.Len(t, rep.Policies, 1)
			applied := rep.Policies[0].Conditions[1]
			assert.Equal(t, "Applied", applied.Type)
			assert.Equal(t, c.applied, applied.Reason, applied.Message)
			if c.applied != ReasonInvalidPolicy {
				assert.ElementsMatch(t, c.want, rep.Policies[0].Clusters)
			}
			// Other members are not governed by c2's policy.
			assert.Contains(t, sourcesIn(t, out, "c1"), "c1")
		})
	}
}

func TestWeightsNeedAGatewayOrMesh(t *testing.T) {
	pol := policy(v1alpha1.ActiveActive, target("c1", 30), target("c3", 70))
	out, err := Render(clusterSetOf("c1", "c2", "c3"), fsmWorld(t, true, true, nil, &pol), nil)
	require.NoError(t, err)
	p := serviceReport(t, out, "web", "site").Policies[0]
	assert.Equal(t, ReasonWeightsNotExpressible, p.Conditions[1].Reason)
	assert.Contains(t, p.Conditions[1].Message, "neither a gateway nor a mesh")
	assert.Nil(t, p.Weights)
	assert.ElementsMatch(t, []string{"c1", "c3"}, sourcesIn(t, out, "c2"), "the sources stay, unweighted")
	assert.Empty(t, objectsOfKind(out, "c2", "HTTPRoute"))
}

func TestMeshWeightsAttachToTheDerivedService(t *testing.T) {
	cfg := clusterSetOf("c1", "c2", "c3")
	cfg.Spec.Members[1].Mesh = true
	pol := policy(v1alpha1.ActiveActive, target("c1", 30), target("c3", 70))
	out, err := Render(cfg, fsmWorld(t, true, true, nil, &pol), nil)
	require.NoError(t, err)

	routes := objectsOfKind(out, "c2", "HTTPRoute")
	require.Len(t, routes, 1)
	r := routes[0].Object.(*gatewayv1.HTTPRoute)
	assert.Equal(t, "Service", string(*r.Spec.ParentRefs[0].Kind))
	assert.Equal(t, DerivedServiceName("web", "site"), string(r.Spec.ParentRefs[0].Name))
	weights := map[string]int32{}
	for _, b := range r.Spec.Rules[0].BackendRefs {
		weights[string(b.Name)] = *b.Weight
	}
	assert.Equal(t, map[string]int32{PerClusterServiceName("web", "site", "c1"): 30, PerClusterServiceName("web", "site", "c3"): 70}, weights)
	assert.Equal(t, map[string]int32{"c1": 30, "c3": 70}, serviceReport(t, out, "web", "site").Policies[0].Weights)
	assert.ElementsMatch(t, []string{"c1", "c3"}, sourcesIn(t, out, "c2"), "the derived Service keeps its endpoints for traffic the mesh does not see")
	assert.Len(t, objectsOfKind(out, "c2", "Service"), 3, "derived plus one per source cluster")
}

// FSM weighs an ActiveActive target without a weight, and the member's own
// endpoints, as accept-all (100) against the explicit weights.
func TestUnweightedTargetsAndLocalEndpointsWeighLikeFSMAcceptAll(t *testing.T) {
	cfg := clusterSetOf("c1", "c2", "c3")
	cfg.Spec.Members[1].Mesh = true
	yes := true
	pol := policy(v1alpha1.ActiveActive, target("c1", 30), target("c3"))
	out, err := Render(cfg, fsmWorld(t, true, true, &yes, &pol), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int32{"c1": 30, "c2": 100, "c3": 100}, serviceReport(t, out, "web", "site").Policies[0].Weights)
}

func TestGatewayWeightsGoThroughTheConsumersOwnGateway(t *testing.T) {
	cfg := gatewaySet(5, "c1", "c2", "c3")
	pol := policy(v1alpha1.ActiveActive, target("c1", 30), target("c3", 70))
	out, err := Render(cfg, fsmWorld(t, true, true, nil, &pol), nil)
	require.NoError(t, err)

	derived := sourcesIn(t, out, "c2")
	assert.Equal(t, []string{""}, derived, "the derived Service's HTTP port points at c2's own gateway, which no single source cluster labels")
	sl := objectsOfKind(out, "c2", "EndpointSlice")
	var local *discoveryv1.EndpointSlice
	for _, o := range sl {
		s := o.Object.(*discoveryv1.EndpointSlice)
		if s.Labels[discoveryv1.LabelServiceName] == DerivedServiceName("web", "site") {
			local = s
		}
	}
	require.NotNil(t, local)
	assert.Equal(t, []string{"192.0.2.2"}, local.Endpoints[0].Addresses)
	assert.Equal(t, int32(30000), *local.Ports[0].Port)
	assert.Equal(t, int32(30000), allocationsOf(out, "c2")["web/site:0"])
	require.Len(t, objectsOfKind(out, "c2", "ListenerSet"), 1)
}
