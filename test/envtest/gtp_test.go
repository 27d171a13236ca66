// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

func policy(name string, lb v1alpha1.LoadBalancerType, targets ...v1alpha1.TrafficTarget) *v1alpha1.GlobalTrafficPolicy {
	return &v1alpha1.GlobalTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec:       v1alpha1.GlobalTrafficPolicySpec{LbType: lb, Targets: targets},
	}
}

func target(key string, weight *int32) v1alpha1.TrafficTarget {
	return v1alpha1.TrafficTarget{ClusterKey: key, Weight: weight}
}

// The GlobalTrafficPolicy CRD every member gets enforces what
// (*GlobalTrafficPolicy).Validate checks, so a policy the apiserver took
// is one the renderer accepts; and its status is a subresource, so a user's
// update of the spec cannot overwrite what mcs-gitops wrote back.
func TestGlobalTrafficPolicyCRD(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := t.Context()
	if err := envtest.EnsureNamespaces(ctx, c.Client, "shop"); err != nil {
		t.Fatal(err)
	}

	t.Run("valid policies are accepted", func(t *testing.T) {
		for _, p := range []*v1alpha1.GlobalTrafficPolicy{
			policy("local", v1alpha1.Locality),
			policy("local-one", v1alpha1.Locality, target("eu/eu-1/default/west", nil)),
			policy("failover", v1alpha1.FailOver, target("//default/east", nil), target("eu//default/west", nil)),
			policy("active", v1alpha1.ActiveActive, target("//default/east", ptr.To[int32](0)), target("//default/west", ptr.To[int32](3))),
		} {
			if errs := p.Validate(); len(errs) > 0 {
				t.Fatalf("%s: test policy is invalid: %v", p.Name, errs)
			}
			if err := c.Client.Create(ctx, p); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
	})

	t.Run("invalid policies are rejected, as Validate rejects them", func(t *testing.T) {
		for _, tc := range []struct {
			p    *v1alpha1.GlobalTrafficPolicy
			want string
			// byValidate: Validate says it too; the name and key format
			// are the loader's and the config's business, not Validate's.
			byValidate bool
		}{
			{policy("two-local", v1alpha1.Locality, target("//default/a", nil), target("//default/b", nil)),
				"lbType Locality allows at most one target", true},
			{policy("no-failover", v1alpha1.FailOver), "lbType FailOver needs at least one target", true},
			{policy("negative", v1alpha1.ActiveActive, target("//default/a", ptr.To[int32](-1))),
				"should be greater than or equal to 0", true},
			{policy("unknown", "RoundRobin"), `Unsupported value: "RoundRobin"`, true},
			{policy("twice", v1alpha1.ActiveActive, target("//default/a", nil), target("//default/a", ptr.To[int32](2))),
				"Duplicate value", true},
			{policy("bad-key", v1alpha1.ActiveActive, target("default/a", nil)), "spec.targets[0].clusterKey", false},
			{policy("web.v2", v1alpha1.Locality), "must be the name of the Service", false},
		} {
			err := c.Client.Create(ctx, tc.p)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want Invalid mentioning %q", tc.p.Name, err, tc.want)
			}
			if got := len(tc.p.Validate()) > 0; got != tc.byValidate {
				t.Errorf("%s: Validate rejects it: %t, want %t", tc.p.Name, got, tc.byValidate)
			}
		}
	})

	t.Run("status is a subresource", func(t *testing.T) {
		p := policy("status", v1alpha1.ActiveActive)
		if err := c.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		gen := p.Generation
		p.Status = v1alpha1.GlobalTrafficPolicyStatus{Clusters: []string{"ignored"}}
		if err := c.Client.Update(ctx, p); err != nil {
			t.Fatal(err)
		}
		if len(p.Status.Clusters) != 0 {
			t.Errorf("a main-resource update set status.clusters %v", p.Status.Clusters)
		}
		p.Status = v1alpha1.GlobalTrafficPolicyStatus{
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
				ObservedGeneration: gen, LastTransitionTime: metav1.Now()}},
			Clusters: []string{"east", "west"},
			Weights:  map[string]int32{"east": 1, "west": 3},
		}
		if err := c.Client.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
		got := &v1alpha1.GlobalTrafficPolicy{}
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			t.Fatal(err)
		}
		if len(got.Status.Clusters) != 2 || got.Status.Weights["west"] != 3 || len(got.Status.Conditions) != 1 {
			t.Errorf("status after a status update: %+v", got.Status)
		}
		if got.Generation != gen {
			t.Errorf("a status update bumped generation %d -> %d", gen, got.Generation)
		}
	})
}
