// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubectlOutput is shaped like `kubectl get -o yaml` output, volatile fields
// and all, plus kinds the renderer does not use.
const kubectlOutput = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: web
    namespace: shop
    uid: 0b6f3a4e-7d2c-4c7e-9d53-1f1b7a0e9c11
    resourceVersion: "48213"
    creationTimestamp: "2026-10-01T10:00:00Z"
    labels: {app: web}
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: '{"big":"blob"}'
    managedFields:
    - manager: kubectl
      operation: Apply
  spec:
    type: NodePort
    clusterIP: 10.96.0.20
    clusterIPs: [10.96.0.20]
    selector: {app: web}
    ports:
    - name: http
      port: 80
      targetPort: 8080
      nodePort: 30080
      protocol: TCP
  status:
    loadBalancer: {}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop}
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata:
  name: web
  namespace: shop
  creationTimestamp: "2026-10-02T10:00:00Z"
  uid: 7f0e
status:
  conditions:
  - type: Valid
    status: "True"
    reason: Valid
    message: ok
    lastTransitionTime: "2026-10-02T10:00:01Z"
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abcde
  namespace: shop
  generateName: web-
  labels:
    kubernetes.io/service-name: web
    endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io
  ownerReferences:
  - apiVersion: v1
    kind: Service
    name: web
    uid: 0b6f3a4e
addressType: IPv4
ports:
- name: http
  port: 8080
  protocol: TCP
endpoints:
- addresses: [10.244.0.5]
  conditions: {ready: true, serving: true, terminating: false}
  nodeName: node-a
  zone: z1
  targetRef: {kind: Pod, name: web-1, namespace: shop, uid: 5d1c0a}
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
status:
  phase: Active
`

func TestParseKubectlOutput(t *testing.T) {
	s, err := Parse("east", "inputs/east.yaml", []byte(kubectlOutput))
	require.NoError(t, err)
	assert.Equal(t, "east", s.Member)
	require.Len(t, s.Services, 1, "the Deployment in the List is ignored, the Service kept")
	require.Len(t, s.ServiceExports, 1, "v1beta1 ServiceExports are read too")
	require.Len(t, s.EndpointSlices, 1)
	require.Len(t, s.Namespaces, 1)
	assert.Equal(t, "2026-10-02T10:00:00Z", s.ServiceExports[0].CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
}

func TestFormatStripsVolatileFieldsAndRoundTrips(t *testing.T) {
	s, err := Parse("east", "east.yaml", []byte(kubectlOutput))
	require.NoError(t, err)
	out, err := Format(s)
	require.NoError(t, err)
	text := string(out)
	for _, volatile := range []string{"uid:", "resourceVersion", "managedFields", "last-applied-configuration",
		"nodePort", "10.96.0.20", "ownerReferences", "targetRef", "nodeName", "lastTransitionTime", "selector"} {
		assert.NotContains(t, text, volatile)
	}
	assert.Contains(t, text, "creationTimestamp: \"2026-10-02T10:00:00Z\"", "export age decides conflicts, so it is kept")
	assert.Contains(t, text, "zone: z1")

	again, err := Parse("east", "east.yaml", out)
	require.NoError(t, err)
	out2, err := Format(again)
	require.NoError(t, err)
	assert.Equal(t, text, string(out2), "formatting is a fixed point")

	// Input order must not matter.
	docs := strings.Split(kubectlOutput, "\n---\n")
	reversed := strings.Join([]string{docs[3], docs[2], docs[1], docs[0]}, "\n---\n")
	s2, err := Parse("east", "east.yaml", []byte(reversed))
	require.NoError(t, err)
	out3, err := Format(s2)
	require.NoError(t, err)
	assert.Equal(t, text, string(out3))
}

func TestParseErrorsNameFileLineAndObject(t *testing.T) {
	svc := func(name string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: shop\nspec:\n  ports:\n  - port: 80\n", name)
	}
	cases := []struct {
		name, input string
		want        []string
	}{
		{"duplicate", svc("web") + "---\n" + svc("web"), []string{"in.yaml:10:", "Service shop/web", "duplicate object (first at line 1)"}},
		{"malformed YAML", "apiVersion: v1\nkind: [\n", []string{"in.yaml:1:", "not valid YAML"}},
		{"no kind", "metadata:\n  name: x\n", []string{"in.yaml:1:", "no apiVersion or kind"}},
		{"not an object", "- a\n- b\n", []string{"in.yaml:1:", "expected a Kubernetes object"}},
		{"invalid name", svc("Web_1"), []string{"Service shop/Web_1", "metadata.name"}},
		{"missing namespace", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n", []string{"metadata.namespace is required"}},
		{"bad port", strings.Replace(svc("web"), "port: 80", "port: 70000", 1), []string{"spec.ports[0].port 70000"}},
		{"bad endpoint address", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: shop}\naddressType: IPv4\nendpoints:\n- addresses: [\"fd00::1\"]\n",
			[]string{"EndpointSlice shop/s", `"fd00::1" is not a valid IPv4 address`}},
		{"old EndpointSlice version", "apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: s, namespace: shop}\n",
			[]string{"discovery.k8s.io/v1beta1 is not supported"}},
		{"export without creationTimestamp", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: web, namespace: shop}\n",
			[]string{"in.yaml:5:", "ServiceExport shop/web", "metadata.creationTimestamp is required"}},
		// The decoder counts lines from the document's start; the error
		// must give the file's line.
		{"syntax error in a later document", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: [\n",
			[]string{"in.yaml:5:", "line 7"}},
		{"empty file", "", []string{"in.yaml", "holds no Kubernetes object"}},
		{"comments only", "# nothing\n---\n# here\n", []string{"holds no Kubernetes object"}},
		{"empty List", "apiVersion: v1\nkind: List\nitems: []\n", []string{"holds no Kubernetes object"}},
		{"nested List", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n", []string{"in.yaml:1:", "a List inside a List"}},
		{"invalid slice name", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: Bad_Name, namespace: shop}\naddressType: IPv4\n",
			[]string{"EndpointSlice shop/Bad_Name", "metadata.name"}},
		{"slice port name used twice", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: shop}\naddressType: IPv4\nports:\n- {name: a, port: 1}\n- {name: a, port: 2}\n",
			[]string{"EndpointSlice shop/s", `ports[1].name "a" is used twice`}},
		{"two cluster IDs", "apiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: cluster.clusterset.k8s.io}\nspec: {value: a}\n---\napiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: cluster.clusterset.k8s.io}\nspec: {value: b}\n",
			[]string{"in.yaml:6:", "appears twice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("m", "in.yaml", []byte(tc.input))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// Values kube-apiserver v1.36 accepts (checked on a real one in
// test/e2e TestSnapshotAcceptsWhatTheAPIServerAccepts) must load.
func TestParseAcceptsWhatTheAPIServerAccepts(t *testing.T) {
	cases := []struct{ name, input string }{
		{"port name that is a DNS label but not an IANA name", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  ports:\n  - {name: 81-81, port: 81}\n  - {name: \"443\", port: 443}\n  - {name: a--b, port: 444}\n"},
		{"slice port name that is a DNS label but not an IANA name", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: shop}\naddressType: IPv4\nports:\n- {name: 81-81, port: 81, protocol: TCP}\n- {name: \"443\", port: 443, protocol: TCP}\n"},
		{"zone that is not a label value", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: shop}\naddressType: IPv4\nendpoints:\n- addresses: [10.0.0.1]\n  zone: \"eu west/1\"\n"},
		{"slice port number outside 0-65535", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: shop}\naddressType: IPv4\nports:\n- {name: a, port: 70000, protocol: TCP}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("m", "in.yaml", []byte(tc.input))
			require.NoError(t, err)
		})
	}
}

func TestParseRejectsOversizeObject(t *testing.T) {
	big := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n  annotations:\n    a: \"" + strings.Repeat("x", MaxObjectBytes) + "\"\n"
	_, err := Parse("m", "in.yaml", []byte(big))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over the")
}

func TestClusterPropertyGivesClusterID(t *testing.T) {
	s, err := Parse("m", "in.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: cluster.clusterset.k8s.io}\nspec: {value: prod-east}\n---\napiVersion: about.k8s.io/v1alpha1\nkind: ClusterProperty\nmetadata: {name: clusterset.k8s.io}\nspec: {value: prod}\n"))
	require.NoError(t, err)
	assert.Equal(t, "prod-east", s.ClusterID)
	assert.Equal(t, "in.yaml:5", s.ClusterIDAt, "the document's absolute line, for render-time errors")
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("a.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
	write("b.yaml", "")

	// An empty snapshot would withdraw every export of b: refused, naming it.
	_, err := LoadDir(dir, []string{"a", "b"}, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "b.yaml")
	assert.Contains(t, err.Error(), "holds no Kubernetes object")

	write("b.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n")
	snaps, err := LoadDir(dir, []string{"a", "b"}, time.Now())
	require.NoError(t, err)
	require.Len(t, snaps, 2)
	assert.Equal(t, "a", snaps[0].Member)
	assert.Len(t, snaps[0].Namespaces, 1)

	_, err = LoadDir(dir, []string{"a", "b", "c"}, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `member "c"`)
	assert.Contains(t, err.Error(), "c.yaml is missing")

	write("stray.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")
	_, err = LoadDir(dir, []string{"a", "b"}, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no member "stray"`)
}

// A snapshot that a pull request turned into a link to a secret must not be
// read: its content would come back in a parse error, in CI's log.
func TestLoadDirReadsNoLink(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "environ")
	require.NoError(t, os.WriteFile(secret, []byte("AWS_SECRET_ACCESS_KEY=hunter2-secret\n"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "b.yaml")))
	_, err := LoadDir(dir, []string{"a", "b"}, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `member "b"`)
	assert.Contains(t, err.Error(), "b.yaml is a symbolic link")
	assert.NotContains(t, err.Error(), "hunter2")
}

// A rejected object survives Format and Parse, so a commit's inputs/ still
// say why an export was left out and render --check reproduces it.
func TestRejectedObjectsRoundTrip(t *testing.T) {
	svc := Rejected{Kind: "Service", Namespace: "shop", Name: "cart", Service: "cart", Message: `spec.ports[0].name "x": bad`}
	slice := Rejected{Kind: "EndpointSlice", Namespace: "shop", Name: "cart-abc", Service: "cart", Message: "addresses: 'odd'"}
	b, err := Format(&Snapshot{Member: "m", Rejected: []Rejected{slice, svc}})
	require.NoError(t, err)
	got, err := Parse("m", "in.yaml", b)
	require.NoError(t, err)
	assert.Equal(t, []Rejected{svc, slice}, got.Rejected, "sorted by namespace, name, kind")
	again, err := Format(got)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(again))

	for name, doc := range map[string]string{
		"unknown kind":    "apiVersion: mcs-gitops.io/v1alpha1\nkind: RejectedObject\nmetadata: {name: x, namespace: shop}\nspec: {kind: Pod, service: x, message: m}\n",
		"no message":      "apiVersion: mcs-gitops.io/v1alpha1\nkind: RejectedObject\nmetadata: {name: x, namespace: shop}\nspec: {kind: Service, service: x}\n",
		"invalid service": "apiVersion: mcs-gitops.io/v1alpha1\nkind: RejectedObject\nmetadata: {name: x, namespace: shop}\nspec: {kind: Service, service: X_1, message: m}\n",
	} {
		_, err := Parse("m", "in.yaml", []byte(doc))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "in.yaml:1:", name)
	}
}

// A snapshot of only kinds a snapshot does not read loads as empty, and an
// empty snapshot withdraws every export: refused like an empty file.
// (Found by FuzzParseSnapshot: such a file parsed, but its Format did not.)
func TestParseRefusesOnlyUnreadKinds(t *testing.T) {
	_, err := Parse("m", "in.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, namespace: y}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in.yaml")
	assert.Contains(t, err.Error(), "holds 2 object(s), none of a kind a snapshot reads")
}
