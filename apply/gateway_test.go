// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

var gatewayGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}

// userGateway is the Gateway a user made for gateway mode: their class,
// a label of theirs and an HTTP listener, plus extra listeners.
func userGateway(extra ...map[string]any) *unstructured.Unstructured {
	listeners := []any{map[string]any{"name": "http", "protocol": "HTTP", "port": int64(80),
		"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}}}
	for _, l := range extra {
		listeners = append(listeners, l)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"namespace": "gateway-system", "name": "east-west", "labels": map[string]any{"team": "net"}},
		"spec":     map[string]any{"gatewayClassName": "users-class", "listeners": listeners},
	}}
}

// testGatewayListeners: with tcpListeners: Gateway the member's own
// Gateway, which the user made, gets the rendered TCP listeners merged in
// by server-side apply; it keeps its class, labels and listener; a second
// apply changes nothing; once the export goes, only our listeners go, and
// the Gateway is never deleted. A missing Gateway is not created, a
// listener of the user's is not taken over, and a Gateway over 64
// listeners is refused; each refusal is the exporting service's problem.
func testGatewayListeners(h *harness) {
	t := h.t
	ctx := t.Context()
	c0 := h.clusters[0].Client
	if err := envtest.EnsureNamespaces(ctx, c0, "gateway-system"); err != nil {
		t.Fatal(err)
	}
	s, files := scenarioFiles(t, "gateway-listeners-in-gateway")
	report, err := layout.ReadReport(files)
	if err != nil {
		t.Fatal(err)
	}
	a := h.applierFor(0, s.Config, "cluster-a")
	const id = "Gateway/gateway-system/east-west"

	// No Gateway yet: the rendered one is refused, not created, and the
	// export learns why.
	rs := ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	if !h.absent(c0, gatewayGVK, "gateway-system", "east-west") {
		t.Fatal("mcs-gitops created the member's Gateway")
	}
	if want := []Refusal{{Object: id, Service: "shop/web", Message: gatewayAbsent}}; !slices.Equal(rs[0].Refused, want) {
		t.Errorf("refused %v, want %v", rs[0].Refused, want)
	}

	user := userGateway()
	if err := c0.Create(ctx, user, client.FieldOwner("kubectl-create")); err != nil {
		t.Fatal(err)
	}
	rs = ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	if len(rs[0].Refused) != 0 || !slices.Contains(rs[0].Configured, id) {
		t.Fatalf("configured %v refused %v; want the Gateway configured", rs[0].Configured, rs[0].Refused)
	}
	gw := h.get(c0, gatewayGVK, "gateway-system", "east-west")
	if got, want := envtest.ListenerNames(gw), []string{"http", "mcs-tcp-30000", "mcs-tcp-30001"}; !slices.Equal(got, want) {
		t.Errorf("listeners %v, want %v: ours merged beside the user's", got, want)
	}
	if class, _, _ := unstructured.NestedString(gw.Object, "spec", "gatewayClassName"); class != "users-class" {
		t.Errorf("gatewayClassName %q, want the user's", class)
	}
	if l := gw.GetLabels(); len(l) != 1 || l["team"] != "net" {
		t.Errorf("labels %v: the user's Gateway got labels of ours, or lost its own", l)
	}
	if !managedBy(gw, FieldManager) || !managedBy(gw, "kubectl-create") {
		t.Errorf("managers %v, want mcs-gitops beside the user's", managers(gw))
	}
	for _, name := range []string{"web-clusterset-5432", "web-clusterset-9000"} {
		r := h.get(c0, schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "TCPRoute"}, "shop", name)
		parents, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
		if p := parents[0].(map[string]any); p["kind"] != "Gateway" || !strings.HasPrefix(p["sectionName"].(string), "mcs-tcp-") {
			t.Errorf("TCPRoute %s parent %v", name, p)
		}
	}

	// A second apply is a no-op, the Gateway's resourceVersion included.
	rv := gw.GetResourceVersion()
	rs = ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	if len(rs[0].Created)+len(rs[0].Configured)+len(rs[0].Deleted) != 0 || !slices.Contains(rs[0].Unchanged, id) {
		t.Errorf("second apply: created %v configured %v deleted %v unchanged %v", rs[0].Created, rs[0].Configured, rs[0].Deleted, rs[0].Unchanged)
	}
	if got := h.get(c0, gatewayGVK, "gateway-system", "east-west").GetResourceVersion(); got != rv {
		t.Errorf("the Gateway's resourceVersion moved from %s to %s on a second apply", rv, got)
	}

	// Unexport: the commit holds nothing for the member any more. Our
	// listeners go; the Gateway, its class, labels and listener stay.
	r, err := a.Apply(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(r.Deleted, id) || !slices.Contains(r.Configured, id) {
		t.Errorf("unexport: deleted %v configured %v; want the Gateway configured, never deleted", r.Deleted, r.Configured)
	}
	gw = h.get(c0, gatewayGVK, "gateway-system", "east-west")
	if gw.GetDeletionTimestamp() != nil || gw.GetUID() != user.GetUID() {
		t.Fatal("the user's Gateway was deleted")
	}
	if got := envtest.ListenerNames(gw); !slices.Equal(got, []string{"http"}) {
		t.Errorf("listeners after unexport %v, want the user's only", got)
	}
	if class, _, _ := unstructured.NestedString(gw.Object, "spec", "gatewayClassName"); class != "users-class" || gw.GetLabels()["team"] != "net" {
		t.Errorf("after unexport: class %q labels %v", class, gw.GetLabels())
	}
	if managedBy(gw, FieldManager) {
		t.Errorf("mcs-gitops still holds fields of the Gateway: %v", managers(gw))
	}
	// Nothing of ours is left, so a further apply of nothing touches it not.
	rv = gw.GetResourceVersion()
	if r, err := a.Apply(ctx, nil, nil); err != nil || len(r.Configured) != 0 {
		t.Errorf("apply of nothing again: configured %v, err %v", r.Configured, err)
	}
	if got := h.get(c0, gatewayGVK, "gateway-system", "east-west").GetResourceVersion(); got != rv {
		t.Errorf("the Gateway's resourceVersion moved from %s to %s though nothing of ours was in it", rv, got)
	}
	if err := c0.Delete(ctx, gw); err != nil {
		t.Fatal(err)
	}

	// A listener of the user's with our name is theirs: the apply does not
	// force it over, the member refuses, and the user's listener stays.
	tcp := func(name string, port int64) map[string]any {
		return map[string]any{"name": name, "protocol": "TCP", "port": port}
	}
	user = userGateway(tcp("mcs-tcp-30000", 31000))
	if err := c0.Create(ctx, user, client.FieldOwner("kubectl-create")); err != nil {
		t.Fatal(err)
	}
	rs = ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	if len(rs[0].Refused) != 1 || rs[0].Refused[0].Object != id || rs[0].Refused[0].Service != "shop/web" ||
		!strings.Contains(rs[0].Refused[0].Message, "conflict") {
		t.Errorf("refused %v, want the Gateway, for shop/web, with a conflict", rs[0].Refused)
	}
	gw = h.get(c0, gatewayGVK, "gateway-system", "east-west")
	ls, _, _ := unstructured.NestedSlice(gw.Object, "spec", "listeners")
	for _, l := range ls {
		if l := l.(map[string]any); l["name"] == "mcs-tcp-30000" && l["port"] != int64(31000) {
			t.Errorf("the user's listener mcs-tcp-30000 was taken over: %v", l)
		}
	}
	if managedBy(gw, FieldManager) {
		t.Errorf("a refused apply left fields of ours: %v", managers(gw))
	}
	if err := c0.Delete(ctx, gw); err != nil {
		t.Fatal(err)
	}

	// The user's listeners count against the Gateway's 64: 63 of theirs
	// and our two are refused by the member, not half applied.
	var many []map[string]any
	for i := range 62 {
		many = append(many, tcp(fmt.Sprintf("user-%d", i), int64(40000+i)))
	}
	user = userGateway(many...)
	if err := c0.Create(ctx, user, client.FieldOwner("kubectl-create")); err != nil {
		t.Fatal(err)
	}
	rs = ApplyAll(ctx, []*Applier{a}, files, report)
	mustOK(t, rs...)
	if len(rs[0].Refused) != 1 || rs[0].Refused[0].Object != id || !strings.Contains(rs[0].Refused[0].Message, "64") {
		t.Errorf("refused %v, want the Gateway over its 64 listeners", rs[0].Refused)
	}
	if got := len(envtest.ListenerNames(h.get(c0, gatewayGVK, "gateway-system", "east-west"))); got != 63 {
		t.Errorf("the Gateway has %d listeners, want the user's 63", got)
	}
	cleanup(h, []*Applier{a})
	if err := c0.Delete(ctx, user); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
