// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// How join reads discovery for the admission policy (pure logic, so a
// fake discovery): a member without the API goes without the policy in
// auto mode; one discovery could not answer for is an error, never a
// policy silently skipped.
func TestWantPolicy(t *testing.T) {
	ctx := context.Background()
	serving := func(served bool) *fake.Clientset {
		cs := fake.NewClientset()
		if served {
			cs.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{GroupVersion: "admissionregistration.k8s.io/v1",
				APIResources: []metav1.APIResource{{Name: "validatingadmissionpolicies"}, {Name: "validatingwebhookconfigurations"}}}}
		}
		return cs
	}
	got, err := wantPolicy(ctx, serving(true), PolicyAuto)
	require.NoError(t, err)
	assert.True(t, got)
	got, err = wantPolicy(ctx, serving(false), PolicyAuto)
	require.NoError(t, err)
	assert.False(t, got, "Kubernetes < 1.30: no policy")
	_, err = wantPolicy(ctx, serving(false), PolicyAlways)
	assert.ErrorContains(t, err, "does not serve")

	failing := serving(true)
	failing.Discovery().(*fakediscovery.FakeDiscovery).PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	})
	_, err = wantPolicy(ctx, failing, PolicyAuto)
	assert.ErrorContains(t, err, "cannot tell whether it serves ValidatingAdmissionPolicy")
	got, err = wantPolicy(ctx, failing, PolicyNever)
	require.NoError(t, err, "never does not ask")
	assert.False(t, got)
}
