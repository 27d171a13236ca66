// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// policyReport is what the renderer says about shop/cart's policies: one
// in cluster-a (which the applier for cluster-a writes), one in cluster-b,
// and one for a service whose policy no longer exists in cluster-a.
func policyReport(applied render.Condition, weights map[string]int32) *render.Report {
	accepted := render.Condition{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "valid"}
	return &render.Report{Services: []render.ServiceReport{
		{Namespace: "shop", Name: "cart", Policies: []render.PolicyReport{
			{Member: "cluster-a", LbType: "ActiveActive", Conditions: []render.Condition{accepted, applied},
				Clusters: []string{"cluster-a", "cluster-b"}, Weights: weights},
			{Member: "cluster-b", LbType: "Locality", Conditions: []render.Condition{accepted}, Clusters: []string{"cluster-b"}},
		}},
		{Namespace: "shop", Name: "gone", Policies: []render.PolicyReport{
			{Member: "cluster-a", LbType: "Locality", Conditions: []render.Condition{accepted}},
		}},
	}}
}

func testPolicyStatus(h *harness) {
	t := h.t
	ctx := t.Context()
	c0, c1 := h.clusters[0].Client, h.clusters[1].Client
	newPolicy := func() *v1alpha1.GlobalTrafficPolicy {
		return &v1alpha1.GlobalTrafficPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"},
			Spec: v1alpha1.GlobalTrafficPolicySpec{LbType: v1alpha1.ActiveActive, Targets: []v1alpha1.TrafficTarget{
				{ClusterKey: "//default/cluster-b", Weight: new(int32(3))},
			}},
		}
	}
	pa, pb := newPolicy(), newPolicy()
	for _, o := range []struct {
		c client.Client
		p *v1alpha1.GlobalTrafficPolicy
	}{{c0, pa}, {c1, pb}} {
		if err := o.c.Create(ctx, o.p); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		_ = c0.Delete(ctx, pa)
		_ = c1.Delete(ctx, pb)
	}()
	get := func(c client.Client) *v1alpha1.GlobalTrafficPolicy {
		t.Helper()
		p := &v1alpha1.GlobalTrafficPolicy{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "cart"}, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conds := func(p *v1alpha1.GlobalTrafficPolicy) map[string]metav1.Condition {
		out := map[string]metav1.Condition{}
		for _, c := range p.Status.Conditions {
			out[c.Type] = c
		}
		return out
	}

	notWeighted := render.Condition{Type: "Applied", Status: "False", Reason: "WeightsNotExpressible", Message: "cluster-a has no mesh"}
	t0 := h.clock.Now()
	a := h.applier(0, "shop", "cluster-a")
	r, err := a.Apply(ctx, nil, policyReport(notWeighted, map[string]int32{"cluster-a": 1, "cluster-b": 3}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"GlobalTrafficPolicy/shop/cart status"}; !slices.Equal(r.StatusWritten, want) {
		t.Errorf("status written = %v, want %v (a policy that does not exist is skipped)", r.StatusWritten, want)
	}
	got := get(c0)
	gen := got.Generation
	if !slices.Equal(got.Status.Clusters, []string{"cluster-a", "cluster-b"}) ||
		!maps.Equal(got.Status.Weights, map[string]int32{"cluster-a": 1, "cluster-b": 3}) {
		t.Errorf("status clusters %v weights %v", got.Status.Clusters, got.Status.Weights)
	}
	for typ, want := range map[string]render.Condition{"Accepted": {Status: "True", Reason: "Accepted"}, "Applied": notWeighted} {
		c, ok := conds(got)[typ]
		if !ok || string(c.Status) != want.Status || c.Reason != want.Reason || c.ObservedGeneration != gen || !c.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("%s = %+v, want %s/%s at generation %d since %s", typ, c, want.Status, want.Reason, gen, t0)
		}
	}
	if other := get(c1); len(other.Status.Conditions)+len(other.Status.Clusters) != 0 {
		t.Errorf("cluster-a's applier wrote cluster-b's policy: %+v", other.Status)
	}
	if !managedBy(h.get(c0, policyGVK, "shop", "cart"), StatusFieldManager) {
		t.Error("policy status not written by the status field manager")
	}

	// The same report an hour later writes nothing.
	rv := got.ResourceVersion
	h.clock.Set(t0.Add(time.Hour))
	r, err = a.Apply(ctx, nil, policyReport(notWeighted, map[string]int32{"cluster-a": 1, "cluster-b": 3}))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.StatusWritten) != 0 || get(c0).ResourceVersion != rv {
		t.Errorf("unchanged status rewritten: %v", r.StatusWritten)
	}

	// The user edits the spec; the next render applies it without weights.
	got.Spec.Targets = nil
	if err := c0.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	t2 := t0.Add(2 * time.Hour)
	h.clock.Set(t2)
	applied := render.Condition{Type: "Applied", Status: "True", Reason: "Applied", Message: "every target reachable"}
	if _, err := a.Apply(ctx, nil, policyReport(applied, nil)); err != nil {
		t.Fatal(err)
	}
	got = get(c0)
	if got.Generation == gen {
		t.Fatal("spec update did not bump generation")
	}
	cs := conds(got)
	if c := cs["Accepted"]; !c.LastTransitionTime.Time.Equal(t0) || c.ObservedGeneration != got.Generation {
		t.Errorf("Accepted = %+v, want its transition time kept at %s and observedGeneration %d", c, t0, got.Generation)
	}
	if c := cs["Applied"]; c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("Applied = %+v, want True since %s", c, t2)
	}
	if len(got.Status.Weights) != 0 {
		t.Errorf("weights %v left after a render without weights", got.Status.Weights)
	}

	// A policy deleted since the snapshot is skipped without an error.
	if err := c0.Delete(ctx, pa); err != nil {
		t.Fatal(err)
	}
	if r, err := a.Apply(ctx, nil, policyReport(applied, nil)); err != nil || len(r.StatusWritten) != 0 {
		t.Errorf("apply after the policy was deleted: %v, status written %v", err, r.StatusWritten)
	}
}

// A ListenerSet is applied and pruned like the routes.
func testListenerSet(h *harness) {
	t := h.t
	ctx := t.Context()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata:
  name: cart
  namespace: shop
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: cart}
spec:
  parentRef: {name: east-west, namespace: gateways, kind: Gateway, group: gateway.networking.k8s.io}
  listeners:
  - {name: tcp-5432, port: 15432, protocol: TCP, allowedRoutes: {namespaces: {from: Same}}}
`), &u.Object); err != nil {
		t.Fatal(err)
	}
	a := h.applier(0, "shop", "cluster-a")
	a.Contract = contract.Member{Name: "cluster-a", GatewayNamespace: "gateways", GatewayName: "east-west"}
	r, err := a.Apply(ctx, []*unstructured.Unstructured{u}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Created, []string{"ListenerSet/shop/cart"}) {
		t.Errorf("created %v", r.Created)
	}
	l := h.get(h.clusters[0].Client, u.GroupVersionKind(), "shop", "cart")
	if l.GetLabels()[LabelMember] != "cluster-a" {
		t.Errorf("ListenerSet labels %v lack the owner labels", l.GetLabels())
	}
	r, err = a.Apply(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Deleted, []string{"ListenerSet/shop/cart"}) {
		t.Errorf("pruned %v, want the ListenerSet", r.Deleted)
	}
	if !h.absent(h.clusters[0].Client, u.GroupVersionKind(), "shop", "cart") {
		t.Error("pruned ListenerSet still exists")
	}
}
