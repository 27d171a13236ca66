// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// memberObjects is what mcs-gitops renders into one importing cluster for an
// exported service "cart" (ClusterSetIP, dual-stack) and "orders" (headless,
// IPv6), with the slice labelled as coming from source. The Namespace is last
// on purpose: ServerSideApply must still apply it first.
func memberObjects(t *testing.T, source string) []*unstructured.Unstructured {
	t.Helper()
	docs := []string{`
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: cart, namespace: shop}
spec:
  type: ClusterSetIP
  ips: [10.96.0.42]
  ports: [{name: http, port: 80, protocol: TCP}]
status:
  clusters: [{cluster: ` + source + `}]
`, `
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata: {name: orders, namespace: shop}
spec:
  type: Headless
  ports: [{name: grpc, port: 9090, protocol: TCP}]
`, `
apiVersion: v1
kind: Service
metadata: {name: derived-cart, namespace: shop}
spec:
  ipFamilyPolicy: RequireDualStack
  ipFamilies: [IPv4, IPv6]
  ports: [{name: http, port: 80, protocol: TCP}]
`, `
apiVersion: v1
kind: Service
metadata: {name: derived-orders, namespace: shop}
spec:
  clusterIP: None
  ipFamilyPolicy: SingleStack
  ipFamilies: [IPv6]
  ports: [{name: grpc, port: 9090, protocol: TCP}]
`, `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: cart-` + source + `
  namespace: shop
  labels:
    multicluster.kubernetes.io/service-name: cart
    multicluster.kubernetes.io/source-cluster: ` + source + `
    kubernetes.io/service-name: derived-cart
addressType: IPv4
endpoints:
- addresses: [10.1.0.5]
  conditions: {ready: true}
ports: [{name: http, port: 8080, protocol: TCP}]
`, `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
`}
	return decode(t, docs...)
}

func decode(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatalf("test object %q: %v", d, err)
		}
		out = append(out, u)
	}
	return out
}

func TestHarnessSelfTest(t *testing.T) {
	clusters := envtest.Start(t, 3)
	ctx := t.Context()

	hosts := map[string]bool{}
	for i, c := range clusters {
		if want := fmt.Sprintf("cluster-%d", i+1); c.Name != want {
			t.Errorf("clusters[%d].Name = %q, want %q", i, c.Name, want)
		}
		hosts[c.Config.Host] = true
	}
	if len(hosts) != len(clusters) {
		t.Fatalf("clusters share apiservers: hosts %v", hosts)
	}

	for _, c := range clusters {
		// Each cluster imports slices from a different source, so reading
		// cluster-1's value back from cluster-2 would show up below.
		source := "source-of-" + c.Name
		objs := memberObjects(t, source)
		before := fmt.Sprint(objs)
		if err := envtest.ServerSideApply(ctx, c.Client, objs, false); err != nil {
			t.Fatalf("cluster %q: %v", c.Name, err)
		}
		if fmt.Sprint(objs) != before {
			t.Errorf("cluster %q: ServerSideApply modified the caller's objects", c.Name)
		}
		t.Run(c.Name, func(t *testing.T) { checkMember(t, c, source) })
	}

	only := decode(t, `
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata: {name: only-in-cluster-1, namespace: shop}
spec: {type: ClusterSetIP, ports: [{port: 443, protocol: TCP}]}
`)
	if err := envtest.ServerSideApply(ctx, clusters[0].Client, only, false); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "shop", Name: "only-in-cluster-1"}
	if err := clusters[0].Client.Get(ctx, key, &mcsv1beta1.ServiceImport{}); err != nil {
		t.Fatalf("cluster-1: reading back %s: %v", key, err)
	}
	for _, c := range clusters[1:] {
		err := c.Client.Get(ctx, key, &mcsv1beta1.ServiceImport{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("cluster %q: %s created in cluster-1 is visible here (err = %v): clusters are not independent", c.Name, key, err)
		}
	}
}

func checkMember(t *testing.T, c *envtest.Cluster, source string) {
	ctx := t.Context()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "shop", Name: name} }

	cart := &mcsv1alpha1.ServiceImport{}
	if err := c.Client.Get(ctx, key("cart"), cart); err != nil {
		t.Fatalf("reading ServiceImport cart via v1alpha1: %v", err)
	}
	if cart.Spec.Type != mcsv1alpha1.ClusterSetIP || len(cart.Spec.Ports) != 1 || cart.Spec.Ports[0].Port != 80 {
		t.Errorf("ServiceImport cart spec = %+v", cart.Spec)
	}
	if len(cart.Status.Clusters) != 0 {
		t.Errorf("a normal apply must not write status, got %+v", cart.Status)
	}
	if !managedByApply(cart.ManagedFields) {
		t.Errorf("ServiceImport cart has no %q Apply entry in managedFields: %+v", envtest.FieldManager, cart.ManagedFields)
	}
	// CoreDNS reads through v1alpha1 and the tool may write v1beta1: the same
	// object must be readable through both.
	cartBeta := &mcsv1beta1.ServiceImport{}
	if err := c.Client.Get(ctx, key("cart"), cartBeta); err != nil {
		t.Fatalf("reading ServiceImport cart via v1beta1: %v", err)
	}
	if cartBeta.Spec.Type != mcsv1beta1.ClusterSetIP || !slices.Equal(cartBeta.Spec.IPs, []string{"10.96.0.42"}) {
		t.Errorf("ServiceImport cart via v1beta1 spec = %+v", cartBeta.Spec)
	}
	orders := &mcsv1alpha1.ServiceImport{}
	if err := c.Client.Get(ctx, key("orders"), orders); err != nil {
		t.Fatalf("reading ServiceImport orders (written as v1beta1) via v1alpha1: %v", err)
	}
	if orders.Spec.Type != mcsv1alpha1.Headless {
		t.Errorf("ServiceImport orders type = %q, want Headless", orders.Spec.Type)
	}

	svc := &corev1.Service{}
	if err := c.Client.Get(ctx, key("derived-cart"), svc); err != nil {
		t.Fatal(err)
	}
	v4, v6 := netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:10:96::/112")
	if ips := svc.Spec.ClusterIPs; len(ips) != 2 || !inPrefix(ips[0], v4) || !inPrefix(ips[1], v6) {
		t.Errorf("dual-stack Service clusterIPs = %q, want one from %s and one from %s", ips, v4, v6)
	}
	if svc.Spec.Selector != nil {
		t.Errorf("derived Service must stay selectorless, got %v", svc.Spec.Selector)
	}
	headless := &corev1.Service{}
	if err := c.Client.Get(ctx, key("derived-orders"), headless); err != nil {
		t.Fatal(err)
	}
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !slices.Equal(headless.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv6Protocol}) {
		t.Errorf("headless IPv6 Service spec: clusterIP %q, ipFamilies %v", headless.Spec.ClusterIP, headless.Spec.IPFamilies)
	}

	slice := &discoveryv1.EndpointSlice{}
	if err := c.Client.Get(ctx, key("cart-"+source), slice); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		mcsv1beta1.LabelServiceName:   "cart",
		mcsv1beta1.LabelSourceCluster: source,
		discoveryv1.LabelServiceName:  "derived-cart",
	}
	for k, v := range wantLabels {
		if got := slice.Labels[k]; got != v {
			t.Errorf("EndpointSlice label %s = %q, want %q", k, got, v)
		}
	}
	if len(slice.Endpoints) != 1 || !slices.Equal(slice.Endpoints[0].Addresses, []string{"10.1.0.5"}) {
		t.Errorf("EndpointSlice endpoints = %+v", slice.Endpoints)
	}
	// Only this cluster's source may be present: a slice from another
	// cluster's apply would mean the apiservers share storage.
	var list discoveryv1.EndpointSliceList
	if err := c.Client.List(ctx, &list, client.InNamespace("shop"), client.HasLabels{mcsv1beta1.LabelSourceCluster}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Labels[mcsv1beta1.LabelSourceCluster] != source {
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		t.Errorf("EndpointSlices in shop = %q, want only cart-%s", names, source)
	}
}

func managedByApply(entries []metav1.ManagedFieldsEntry) bool {
	for _, e := range entries {
		if e.Manager == envtest.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

func inPrefix(ip string, p netip.Prefix) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && p.Contains(a)
}

func TestHarnessApplyErrorsNameObjectsAndDryRunPersistsNothing(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := t.Context()
	if err := envtest.EnsureNamespaces(ctx, c.Client, "shop", "shop", ""); err != nil {
		t.Fatalf("EnsureNamespaces must tolerate duplicates and existing namespaces: %v", err)
	}

	bad := decode(t, `
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata: {name: bogus, namespace: shop}
spec: {type: Bogus, ports: [{port: 80}]}
`, `
apiVersion: v1
kind: Service
metadata: {name: ghost, namespace: shop}
spec: {ports: [{port: 80}]}
`, `
apiVersion: v1
kind: Service
metadata: {name: wrong-family, namespace: shop}
spec: {clusterIP: 10.96.0.10, ipFamilies: [IPv6], ports: [{port: 80}]}
`, `
apiVersion: v1
kind: ConfigMap
metadata: {name: elsewhere, namespace: no-such-namespace}
`)
	err := envtest.ServerSideApply(ctx, c.Client, bad, true)
	if err == nil {
		t.Fatal("dry-run apply of invalid objects succeeded")
	}
	for _, want := range []string{
		"multicluster.x-k8s.io/v1beta1 ServiceImport shop/bogus",
		"v1 Service shop/wrong-family",
		"v1 ConfigMap no-such-namespace/elsewhere",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "shop/ghost") {
		t.Errorf("valid Service shop/ghost reported as failing:\n%v", err)
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("the apiserver's Invalid status is lost in the wrapping: %v", err)
	}

	// dryRun=All ran admission for ghost but must not have stored it.
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: "shop", Name: "ghost"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run stored Service shop/ghost: Get err = %v, want NotFound", err)
	}
}

// fatalTB records how Start ends the test. Every method Start may call on
// failure is overridden; anything else reaches the nil embedded TB and panics,
// which the test reports as well.
type fatalTB struct {
	testing.TB
	msg     string
	skipped bool
}

type fatalExit struct{}

func (f *fatalTB) Helper()             {}
func (f *fatalTB) Cleanup(func())      {}
func (f *fatalTB) Logf(string, ...any) {}
func (f *fatalTB) Errorf(format string, a ...any) {
	f.msg += fmt.Sprintf(format, a...)
}
func (f *fatalTB) Fatal(a ...any) { f.msg += fmt.Sprint(a...); panic(fatalExit{}) }
func (f *fatalTB) Fatalf(format string, a ...any) {
	f.msg += fmt.Sprintf(format, a...)
	panic(fatalExit{})
}
func (f *fatalTB) FailNow()             { panic(fatalExit{}) }
func (f *fatalTB) Skip(...any)          { f.skipped = true; panic(fatalExit{}) }
func (f *fatalTB) Skipf(string, ...any) { f.skipped = true; panic(fatalExit{}) }
func (f *fatalTB) SkipNow()             { f.skipped = true; panic(fatalExit{}) }

func TestHarnessMissingBinariesFailWithHint(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", empty)
	fake := &fatalTB{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fatalExit); !ok {
					t.Fatalf("Start panicked instead of failing the test: %v", r)
				}
			}
		}()
		envtest.Start(fake, 2)
		t.Fatal("Start returned clusters from an empty assets directory")
	}()
	if fake.skipped {
		t.Fatal("Start skipped the test; missing binaries must fail it")
	}
	for _, want := range []string{"make testbin", empty, "kube-apiserver"} {
		if !strings.Contains(fake.msg, want) {
			t.Errorf("failure message does not mention %q:\n%s", want, fake.msg)
		}
	}
}

func TestHarnessAssetsDirPrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Setenv("MCS_GITOPS_TESTBIN", "")
	steps := []struct {
		set, value, want string
	}{
		{"", "", filepath.Join(home, ".cache", "mcs-gitops", "testbin")},
		{"MCS_GITOPS_TESTBIN", "/opt/testbin", "/opt/testbin"},
		{"KUBEBUILDER_ASSETS", "/opt/assets", "/opt/assets"},
	}
	for _, s := range steps {
		if s.set != "" {
			t.Setenv(s.set, s.value)
		}
		got, err := envtest.AssetsDir()
		if err != nil {
			t.Fatal(err)
		}
		if got != s.want {
			t.Errorf("after setting %s=%q: AssetsDir() = %q, want %q", s.set, s.value, got, s.want)
		}
	}
}

// Gateway mode renders HTTPRoutes, TCPRoutes and ListenerSets; every member
// the tests start serves them, so the apiserver's own validation can judge
// them.
func TestGatewayAPIServed(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRouteList"},
		{Group: "gateway.networking.k8s.io", Version: "v1alpha2", Kind: "TCPRouteList"},
		{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GatewayList"},
		{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "ListenerSetList"},
	} {
		var l unstructured.UnstructuredList
		l.SetGroupVersionKind(gvk)
		if err := c.Client.List(context.Background(), &l); err != nil {
			t.Errorf("%s: %v", gvk, err)
		}
	}
}

// Members can be started IPv4-only, IPv6-only and dual-stack, and they
// differ the way real ones do: a single-stack apiserver refuses a Service
// that pins two families even with PreferDualStack, and accepts one that
// leaves the families to it.
func TestStacksMixed(t *testing.T) {
	stacks := []envtest.Stack{envtest.IPv4Only, envtest.IPv6Only, envtest.DualStack}
	cs := envtest.StartStacks(t, stacks...)
	ctx := t.Context()
	want := map[envtest.Stack][]corev1.IPFamily{
		envtest.IPv4Only:  {corev1.IPv4Protocol},
		envtest.IPv6Only:  {corev1.IPv6Protocol},
		envtest.DualStack: {corev1.IPv4Protocol, corev1.IPv6Protocol},
	}
	for i, c := range cs {
		stack := stacks[i]
		require.NoError(t, envtest.EnsureNamespaces(ctx, c.Client, "shop"))
		pinned := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: "shop"}, Spec: corev1.ServiceSpec{
			IPFamilies:     []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol},
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack),
			Ports:          []corev1.ServicePort{{Port: 80}},
		}}
		err := c.Client.Create(ctx, pinned)
		if stack == envtest.DualStack {
			require.NoError(t, err, "%s accepts two pinned families", stack)
		} else {
			require.Error(t, err, "%s refuses two pinned families", stack)
		}
		free := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "free", Namespace: "shop"}, Spec: corev1.ServiceSpec{
			IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyPreferDualStack),
			Ports:          []corev1.ServicePort{{Port: 80}},
		}}
		require.NoError(t, c.Client.Create(ctx, free), "%s", stack)
		assert.Equal(t, want[stack], free.Spec.IPFamilies, "%s: families the apiserver chose", stack)
		assert.Len(t, free.Spec.ClusterIPs, len(want[stack]), "%s", stack)
	}
}
