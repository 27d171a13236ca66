// SPDX-License-Identifier: Apache-2.0

package contract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// parse reads YAML documents into objects.
func parse(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(d), &u.Object))
		out = append(out, u)
	}
	return out
}

var member = contract.Member{Name: "cluster-b", GatewayNamespace: "fsm-system", GatewayName: "east-west"}

// A consistent rendered set: import, derived Service, slice, route.
const base = `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata:
  name: api
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, team: web}
  annotations: {multicluster.kubernetes.io/derived-service: derived-m843m4cq60}
spec: {type: ClusterSetIP, ports: [{name: http, port: 80, protocol: TCP}]}
---
apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP, ports: [{name: http, port: 80, protocol: TCP, targetPort: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: derived-m843m4cq60-cluster-a-0123456789
  namespace: web
  labels:
    app.kubernetes.io/managed-by: mcs-gitops
    endpointslice.kubernetes.io/managed-by: mcs-gitops.io
    kubernetes.io/service-name: derived-m843m4cq60
    multicluster.kubernetes.io/service-name: api
    multicluster.kubernetes.io/source-cluster: cluster-a
addressType: IPv4
endpoints: [{addresses: [10.1.0.5], conditions: {ready: true}}]
ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: api-clusterset
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  hostnames: [api.web.svc.clusterset.local]
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: east-west, namespace: fsm-system}]
  rules: [{backendRefs: [{name: api, port: 80}]}]`

func TestBaseIsInsideTheContract(t *testing.T) {
	// The derived name in base must be the renderer's, or every tamper test
	// below would pass for the wrong reason.
	require.Empty(t, contract.Check(member, parse(t, base)))
}

// Each attack is one object added to (or changed in) a rendered commit; the
// contract refuses exactly that object, with a reason naming the rule.
func TestContractRefusesShapesTheRendererNeverEmits(t *testing.T) {
	for _, tc := range []struct {
		name, add, want string
		m               contract.Member
		noRoute         bool // the base's route would fail for m too
	}{
		{name: "slice attached to the kubernetes Service", want: "feeds Service default/kubernetes, which this commit does not render within the contract", add: `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes-evil
  namespace: default
  labels: {app.kubernetes.io/managed-by: mcs-gitops, endpointslice.kubernetes.io/managed-by: mcs-gitops.io, kubernetes.io/service-name: kubernetes, multicluster.kubernetes.io/service-name: kubernetes}
addressType: IPv4
endpoints: [{addresses: [10.9.9.9]}]
ports: [{name: https, port: 443, protocol: TCP}]`},
		{name: "slice attached to a user's Service", want: "feeds Service web/checkout, which this commit does not render within the contract", add: `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: checkout-evil
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, endpointslice.kubernetes.io/managed-by: mcs-gitops.io, kubernetes.io/service-name: checkout, multicluster.kubernetes.io/service-name: api}
addressType: IPv4
endpoints: [{addresses: [10.9.9.9]}]`},
		{name: "slice without the project's managed-by", want: "label endpointslice.kubernetes.io/managed-by is missing", add: `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: derived-m843m4cq60-x
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, kubernetes.io/service-name: derived-m843m4cq60, multicluster.kubernetes.io/service-name: api}
addressType: IPv4`},
		{name: "slice with a pod reference", want: "endpoints[0].targetRef is never rendered", add: `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: derived-m843m4cq60-y
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, endpointslice.kubernetes.io/managed-by: mcs-gitops.io, kubernetes.io/service-name: derived-m843m4cq60, multicluster.kubernetes.io/service-name: api}
addressType: IPv4
endpoints: [{addresses: [10.1.0.6], targetRef: {kind: Pod, name: x, namespace: web}}]`},
		{name: "Service with externalIPs (CVE-2020-8554)", want: "spec.externalIPs is never rendered", add: `apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP, externalIPs: [8.8.8.8], ports: [{port: 53, targetPort: 53}]}`},
		{name: "Service with a selector", want: "spec.selector is never rendered", add: `apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP, selector: {app: db}, ports: [{port: 80, targetPort: 80}]}`},
		{name: "NodePort Service", want: `spec.type "NodePort"`, add: `apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: NodePort, ports: [{port: 80, targetPort: 80}]}`},
		{name: "nodePort on a ClusterIP Service", want: "spec.ports[0].nodePort is never rendered", add: `apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP, ports: [{port: 80, targetPort: 80, nodePort: 30080}]}`},
		{name: "loadBalancerIP", want: "spec.loadBalancerIP is never rendered", add: `apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP, loadBalancerIP: 1.2.3.4, ports: [{port: 80, targetPort: 80}]}`},
		{name: "Service named unlike the renderer", want: `the renderer names this Service "derived-m843m4cq60"`, add: `apiVersion: v1
kind: Service
metadata:
  name: api-admin
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP, ports: [{port: 80, targetPort: 80}]}`},
		{name: "Service with a fixed cluster IP", want: "spec.clusterIP 10.96.0.10", add: `apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP, clusterIP: 10.96.0.10, ports: [{port: 80, targetPort: 80}]}`},
		{name: "route to another Gateway", want: "Gateway kube-system/internal is not member cluster-b's Gateway fsm-system/east-west", add: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: api-path
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: internal, namespace: kube-system}]
  rules: [{backendRefs: [{name: api, port: 80}]}]`},
		{name: "route to a Service of another namespace", want: "backendRefs[0].namespace is never rendered", add: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: api-path
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: east-west, namespace: fsm-system}]
  rules: [{backendRefs: [{name: vault, namespace: secrets, port: 8200}]}]`},
		{name: "route to a user's Service of the namespace", want: "Service admin is neither the exported Service api nor one this commit renders", add: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: api-path
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: east-west, namespace: fsm-system}]
  rules: [{backendRefs: [{name: admin, port: 80}]}]`},
		{name: "route on a member without a gateway", m: contract.Member{Name: "cluster-a"}, noRoute: true, want: "member cluster-a has no gateway configured", add: `apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata:
  name: api-clusterset-5432
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: east-west, namespace: fsm-system}]
  rules: [{backendRefs: [{name: api, port: 5432}]}]`},
		{name: "ListenerSet open to every namespace", want: `allowedRoutes.namespaces.from "All"`, add: `apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata:
  name: api
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  parentRef: {group: gateway.networking.k8s.io, kind: Gateway, name: east-west, namespace: fsm-system}
  listeners: [{name: tcp-30000, port: 30000, protocol: TCP, allowedRoutes: {namespaces: {from: All}}}]`},
		{name: "ListenerSet on another Gateway", want: "spec.parentRef: Gateway fsm-system/public is not", add: `apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata:
  name: api
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  parentRef: {group: gateway.networking.k8s.io, kind: Gateway, name: public, namespace: fsm-system}
  listeners: [{name: tcp-30000, port: 30000, protocol: TCP, allowedRoutes: {namespaces: {from: Same}}}]`},
		{name: "privileged Namespace", m: contract.Member{Name: "cluster-b", GatewayNamespace: "fsm-system", GatewayName: "east-west", CreateMissingNamespaces: true}, want: "label pod-security.kubernetes.io/enforce is never rendered on a Namespace", add: `apiVersion: v1
kind: Namespace
metadata:
  name: tenant
  labels: {app.kubernetes.io/managed-by: mcs-gitops, pod-security.kubernetes.io/enforce: privileged}`},
		{name: "Namespace without createMissingNamespaces", want: "createMissingNamespaces is off", add: `apiVersion: v1
kind: Namespace
metadata:
  name: tenant
  labels: {app.kubernetes.io/managed-by: mcs-gitops}`},
		{name: "import that names another Service", want: `annotation multicluster.kubernetes.io/derived-service is "kube-dns"`, add: `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata:
  name: api
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops}
  annotations: {multicluster.kubernetes.io/derived-service: kube-dns}
spec: {type: ClusterSetIP}`},
		{name: "import carrying the applier's owner label", want: "label mcs-gitops.io/member is reserved", add: `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata:
  name: api
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, mcs-gitops.io/member: cluster-z}
  annotations: {multicluster.kubernetes.io/derived-service: derived-m843m4cq60}
spec: {type: ClusterSetIP}`},
		{name: "object with a finalizer", want: "metadata.finalizers is never rendered", add: `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata:
  name: api
  namespace: web
  finalizers: [example.com/never]
  labels: {app.kubernetes.io/managed-by: mcs-gitops}
  annotations: {multicluster.kubernetes.io/derived-service: derived-m843m4cq60}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := member
			if tc.m.Name != "" {
				m = tc.m
			}
			b := base
			if tc.noRoute {
				b = b[:strings.LastIndex(b, "\n---\n")]
			}
			objs := append(parse(t, b), parse(t, tc.add)...)
			v := contract.Check(m, objs)
			require.Len(t, v, 1, "%v", v)
			assert.Equal(t, len(objs)-1, v[0].Index, "the added object, and only it, is refused")
			assert.Contains(t, v[0].Reason, tc.want)

			// Checked again after the commit without it, the same verdicts,
			// whether or not the added object is one others refer to.
			_, last := contract.CheckAgain(m, objs[:len(objs)-1], nil)
			again, _ := contract.CheckAgain(m, objs, last)
			assert.Equal(t, v, again, "checked again")
		})
	}
}

// A reference counts only when its target is itself within the contract:
// an unlabelled Service of the derived name does not make a slice for it
// acceptable. (Found by FuzzContract; its input is in testdata/fuzz.)
func TestReferencesOnlyToObjectsWithinTheContract(t *testing.T) {
	objs := parse(t, `apiVersion: v1
kind: Service
metadata:
  name: derived-m843m4cq60
  namespace: web
  labels: {multicluster.kubernetes.io/service-name: api}
spec: {type: ClusterIP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: derived-m843m4cq60-x
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, endpointslice.kubernetes.io/managed-by: mcs-gitops.io, kubernetes.io/service-name: derived-m843m4cq60, multicluster.kubernetes.io/service-name: api}
addressType: IPv4`)
	v := contract.Check(member, objs)
	require.Len(t, v, 2)
	assert.Contains(t, v[0].Reason, "label app.kubernetes.io/managed-by=mcs-gitops is missing")
	assert.Contains(t, v[1].Reason, "feeds Service web/derived-m843m4cq60, which this commit does not render within the contract")
}

// inGateway is member with tcpListeners: Gateway.
var inGateway = contract.Member{Name: "cluster-b", GatewayNamespace: "fsm-system", GatewayName: "east-west", GatewayListeners: true}

// mergedGateway is what the renderer writes of the member's own Gateway
// with tcpListeners: Gateway, and the TCPRoute on one of its listeners.
const mergedGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: east-west
  namespace: fsm-system
spec:
  listeners:
  - name: mcs-tcp-30000
    port: 30000
    protocol: TCP
    allowedRoutes:
      kinds: [{group: gateway.networking.k8s.io, kind: TCPRoute}]
      namespaces: {from: Selector, selector: {matchLabels: {kubernetes.io/metadata.name: web}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata:
  name: api-clusterset-5432
  namespace: web
  labels: {app.kubernetes.io/managed-by: mcs-gitops, multicluster.kubernetes.io/service-name: api}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: east-west, namespace: fsm-system, sectionName: mcs-tcp-30000}]
  rules: [{backendRefs: [{name: api, port: 5432}]}]`

func TestMergedGatewayIsInsideTheContract(t *testing.T) {
	require.Empty(t, contract.Check(inGateway, parse(t, base+"\n---\n"+mergedGateway)))
}

// The member's Gateway is the user's object: the contract lets through
// only the listeners the renderer merges into it, only into the member's
// own Gateway, and only when the member declares its listeners there.
func TestContractHoldsTheGatewayToItsListeners(t *testing.T) {
	edit := func(old, new string) string {
		require.Contains(t, mergedGateway, old)
		return strings.Replace(mergedGateway, old, new, 1)
	}
	for _, tc := range []struct {
		name, doc, want string
		m               contract.Member
	}{
		{name: "listeners in ListenerSets", m: member, doc: mergedGateway, want: "does not declare its listeners in the Gateway (tcpListeners: Gateway)"},
		{name: "another Gateway", doc: edit("name: east-west\n  namespace: fsm-system", "name: public\n  namespace: fsm-system"),
			want: "Gateway fsm-system/public is not member cluster-b's Gateway fsm-system/east-west"},
		{name: "a class", doc: edit("spec:\n", "spec:\n  gatewayClassName: evil\n"), want: "spec.gatewayClassName is never rendered on a Gateway"},
		{name: "addresses", doc: edit("spec:\n", "spec:\n  addresses: [{type: IPAddress, value: 8.8.8.8}]\n"), want: "spec.addresses is never rendered"},
		{name: "our owner labels", doc: edit("  namespace: fsm-system\n", "  namespace: fsm-system\n  labels: {app.kubernetes.io/managed-by: mcs-gitops}\n"),
			want: "metadata.labels is never rendered on a Gateway"},
		{name: "an annotation", doc: edit("  namespace: fsm-system\n", "  namespace: fsm-system\n  annotations: {a: b}\n"), want: "metadata.annotations is never rendered"},
		{name: "no listener", doc: edit(mergedGateway[strings.Index(mergedGateway, "  listeners:"):strings.Index(mergedGateway, "---")], "  listeners: []\n"),
			want: "only with listeners"},
		{name: "a listener named like the user's", doc: edit("name: mcs-tcp-30000", "name: http"), want: `name "http": the renderer names the listener on port 30000 "mcs-tcp-30000"`},
		{name: "an HTTP listener", doc: edit("protocol: TCP", "protocol: HTTP"), want: `protocol "HTTP"`},
		{name: "a TLS listener", doc: edit("protocol: TCP", "protocol: TLS\n    tls: {mode: Passthrough}"), want: "spec.listeners[0]: tls is never rendered"},
		{name: "open to every namespace", doc: edit("{from: Selector, selector: {matchLabels: {kubernetes.io/metadata.name: web}}}", "{from: All}"),
			want: "opens a listener to one namespace only"},
		{name: "open to the Gateway's namespace", doc: edit("{from: Selector, selector: {matchLabels: {kubernetes.io/metadata.name: web}}}", "{from: Same}"),
			want: "opens a listener to one namespace only"},
		{name: "a selector by expression", doc: edit("{matchLabels: {kubernetes.io/metadata.name: web}}", "{matchExpressions: [{key: team, operator: Exists}]}"),
			want: "selector.matchExpressions is never rendered"},
		{name: "a selector by another label", doc: edit("kubernetes.io/metadata.name: web", "team: web"), want: "opens a listener to one namespace only"},
		{name: "HTTPRoutes admitted", doc: edit("kind: TCPRoute}]", "kind: HTTPRoute}]"), want: "admits TCPRoutes only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := inGateway
			if tc.m.Name != "" {
				m = tc.m
			}
			objs := append(parse(t, base), parse(t, tc.doc)...)
			v := contract.Check(m, objs)
			require.Len(t, v, 1, "%v", v)
			assert.Equal(t, "Gateway/fsm-system/"+objs[len(objs)-2].GetName(), v[0].Object)
			assert.Contains(t, v[0].Reason, tc.want)
		})
	}

	var many strings.Builder
	many.WriteString("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: east-west, namespace: fsm-system}\nspec:\n  listeners:\n")
	for p := 30000; p <= 30064; p++ {
		fmt.Fprintf(&many, "  - {name: mcs-tcp-%d, port: %d, protocol: TCP, allowedRoutes: {kinds: [{group: gateway.networking.k8s.io, kind: TCPRoute}], namespaces: {from: Selector, selector: {matchLabels: {kubernetes.io/metadata.name: web}}}}}\n", p, p)
	}
	v := contract.Check(inGateway, parse(t, many.String()))
	require.Len(t, v, 1)
	assert.Contains(t, v[0].Reason, "65 listeners; a Gateway holds at most 64")
}

// CheckAgain gives Check's verdicts on every step of a commit's life: an
// object new since the last check, one replaced, one removed, the objects
// others refer to replaced (which must void what the slices were checked
// against), and another member's contract.
func TestCheckAgainIsCheck(t *testing.T) {
	objs := parse(t, base)
	slice, svc := objs[2], objs[1]
	steps := []struct {
		name string
		m    contract.Member
		objs func() []*unstructured.Unstructured
	}{
		{"first", member, func() []*unstructured.Unstructured { return objs }},
		{"slice replaced", member, func() []*unstructured.Unstructured {
			moved := slice.DeepCopy()
			moved.Object["endpoints"] = []any{map[string]any{"addresses": []any{"10.1.0.6"}}}
			return []*unstructured.Unstructured{objs[0], objs[1], moved, objs[3]}
		}},
		{"slice with a pod reference", member, func() []*unstructured.Unstructured {
			bad := slice.DeepCopy()
			bad.Object["endpoints"] = []any{map[string]any{"addresses": []any{"10.1.0.6"}, "targetRef": map[string]any{"kind": "Pod", "name": "x"}}}
			return []*unstructured.Unstructured{objs[0], objs[1], bad, objs[3]}
		}},
		{"Service removed", member, func() []*unstructured.Unstructured {
			return []*unstructured.Unstructured{objs[0], objs[2], objs[3]}
		}},
		{"Service back", member, func() []*unstructured.Unstructured { return objs }},
		{"Service replaced by one outside the contract", member, func() []*unstructured.Unstructured {
			user := svc.DeepCopy()
			user.SetLabels(map[string]string{"multicluster.kubernetes.io/service-name": "api"})
			return []*unstructured.Unstructured{objs[0], user, objs[2], objs[3]}
		}},
		{"the user's Service rebuilt equal", member, func() []*unstructured.Unstructured {
			user := svc.DeepCopy()
			user.SetLabels(map[string]string{"multicluster.kubernetes.io/service-name": "api"})
			return []*unstructured.Unstructured{objs[0].DeepCopy(), user, slice.DeepCopy(), objs[3]}
		}},
		{"Service back again", member, func() []*unstructured.Unstructured { return objs }},
		{"everything rebuilt equal, the slice moved", member, func() []*unstructured.Unstructured {
			moved := slice.DeepCopy()
			moved.Object["endpoints"] = []any{map[string]any{"addresses": []any{"10.1.0.7"}}}
			return []*unstructured.Unstructured{objs[0].DeepCopy(), objs[1].DeepCopy(), moved, objs[3].DeepCopy()}
		}},
		{"another member's contract", contract.Member{Name: "cluster-b"}, func() []*unstructured.Unstructured { return objs }},
	}
	var last *contract.Checked
	for _, st := range steps {
		objs := st.objs()
		var got []contract.Violation
		got, last = contract.CheckAgain(st.m, objs, last)
		assert.Equal(t, contract.Check(st.m, objs), got, st.name)
	}
}
