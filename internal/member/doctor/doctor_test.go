// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func names(as []access) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

// What a member's identity must be allowed follows its mode: the Gateway
// API rights only in gateway mode, Gateways only when TCP listeners go
// into the Gateway, ListenerSets only when they do not.
func TestNeededFollowsTheMembersMode(t *testing.T) {
	cfg := &v1alpha1.ClusterSet{}
	flat, err := needed(cfg, v1alpha1.Member{Name: "a"})
	require.NoError(t, err)
	assert.Contains(t, names(flat), "delete services")
	assert.Contains(t, names(flat), "patch serviceexports/status.multicluster.x-k8s.io")
	assert.False(t, slices.ContainsFunc(flat, func(a access) bool { return a.group == "gateway.networking.k8s.io" }))
	assert.NotContains(t, names(flat), "create namespaces")

	gw, err := needed(cfg, v1alpha1.Member{Name: "a", Mode: v1alpha1.ModeGateway, Gateway: &v1alpha1.Gateway{}})
	require.NoError(t, err)
	assert.Contains(t, names(gw), "create listenersets.gateway.networking.k8s.io")
	assert.NotContains(t, names(gw), "patch gateways.gateway.networking.k8s.io")

	inGateway, err := needed(cfg, v1alpha1.Member{Name: "a", Mode: v1alpha1.ModeGateway,
		Gateway: &v1alpha1.Gateway{TCPListeners: v1alpha1.TCPListenersGateway}})
	require.NoError(t, err)
	assert.Contains(t, names(inGateway), "patch gateways.gateway.networking.k8s.io")
	assert.NotContains(t, names(inGateway), "create listenersets.gateway.networking.k8s.io")

	cfg.Spec.Render.CreateMissingNamespaces = true
	ns, err := needed(cfg, v1alpha1.Member{Name: "a"})
	require.NoError(t, err)
	assert.Contains(t, names(ns), "create namespaces")
	assert.NotContains(t, names(ns), "get configmaps", "doctor's own Corefile read is not the loop's need")
}

func TestWantServed(t *testing.T) {
	cfg := &v1alpha1.ClusterSet{}
	cfg.Spec.Render.ServiceImportAPIVersion = "v1beta1"
	got := wantServed(cfg, v1alpha1.Member{Mode: v1alpha1.ModeGateway})
	var gvs []string
	for _, s := range got {
		gvs = append(gvs, s.groupVersion)
	}
	assert.Equal(t, []string{"multicluster.x-k8s.io/v1alpha1", "multicluster.x-k8s.io/v1beta1", "mcs-gitops.io/v1alpha1", "gateway.networking.k8s.io/v1"}, gvs)
	assert.Contains(t, got[3].resources, "listenersets")
}

func TestReportOutput(t *testing.T) {
	r := &Report{Members: []Member{{Name: "east", Checks: []Check{
		{Name: CheckReachable, Status: OK, Message: "Kubernetes v1.36.3"},
		{Name: CheckCoreDNS, Status: Error, Message: "no zone", Fix: "join --dns"},
		{Name: CheckIdentity, Status: Warning, Message: "expires soon", Fix: "join --rotate"},
	}}}}
	r.count()
	assert.Equal(t, 1, r.Errors)
	assert.Equal(t, 1, r.Warnings)
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	assert.Equal(t, `east
  ok   reachable    Kubernetes v1.36.3
  FAIL coredns      no zone
                    fix: join --dns
  WARN identity     expires soon
                    fix: join --rotate
1 error(s), 1 warning(s)
`, text.String())
	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var back Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, *r, back)
}

// How the crds check reads discovery's answers (pure logic, so a fake
// discovery): a group version the member does not serve is missing, with
// join as the fix; one it could not be asked about is not called missing,
// since joining again would not help.
func TestCRDsTellsMissingFromUnknown(t *testing.T) {
	o := &Options{Config: &v1alpha1.ClusterSet{}}
	cm := v1alpha1.Member{Name: "east"}
	cs := fake.NewClientset()
	disc := cs.Discovery().(*fakediscovery.FakeDiscovery)
	disc.Resources = []*metav1.APIResourceList{{GroupVersion: "mcs-gitops.io/v1alpha1",
		APIResources: []metav1.APIResource{{Name: "globaltrafficpolicies", Verbs: []string{"create", "get", "list"}}}}}

	c := o.crds(context.Background(), cs, cm)
	assert.Equal(t, Error, c.Status)
	assert.Equal(t, "not served: serviceexports (multicluster.x-k8s.io/v1alpha1), serviceimports (multicluster.x-k8s.io/v1alpha1)", c.Message)
	assert.Contains(t, c.Fix, "mcs-gitops member join east")

	disc.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	})
	c = o.crds(context.Background(), cs, cm)
	assert.Equal(t, Error, c.Status)
	assert.Equal(t, "cannot tell what it serves (multicluster.x-k8s.io/v1alpha1): the server is currently unable to handle the request", c.Message)
	assert.NotContains(t, c.Fix, "join")
}
