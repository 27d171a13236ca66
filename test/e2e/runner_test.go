// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// goodScenario has two members and, around them, files the runner must not
// touch: invalid YAML outside clusters/ and a file directly under clusters/.
const goodScenario = `A rendered scenario, written by hand to exercise the runner.
-- clusterset.yaml --
this is: [not valid yaml
-- inputs/east.yaml --
: nor is this
-- clusters/README.md --
belongs to no member
-- clusters/east/kustomization.yaml --
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- shop/serviceimport-cart.yaml
- shop/service-derived-cart.yaml
- shop/endpointslice-cart-west.yaml
- namespace-shop.yaml
-- clusters/east/namespace-shop.yaml --
apiVersion: v1
kind: Namespace
metadata:
  name: shop
-- clusters/east/shop/serviceimport-cart.yaml --
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata:
  name: cart
  namespace: shop
  annotations:
    multicluster.kubernetes.io/derived-service: derived-0123456789
spec:
  type: ClusterSetIP
  ips: [10.96.0.42, "fd00:10:96::42"]
  ipFamilies: [IPv4, IPv6]
  ports:
  - name: http
    port: 80
    protocol: TCP
status:
  clusters:
  - cluster: west
-- clusters/east/shop/service-derived-cart.yaml --
apiVersion: v1
kind: Service
metadata:
  name: derived-0123456789
  namespace: shop
spec:
  type: ClusterIP
  ipFamilyPolicy: RequireDualStack
  ipFamilies: [IPv4, IPv6]
  ports:
  - name: http
    port: 80
    protocol: TCP
-- clusters/east/shop/endpointslice-cart-west.yaml --
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: cart-west
  namespace: shop
  labels:
    multicluster.kubernetes.io/service-name: cart
    multicluster.kubernetes.io/source-cluster: west
    kubernetes.io/service-name: derived-0123456789
    endpointslice.kubernetes.io/managed-by: mcs-gitops
addressType: IPv4
endpoints:
- addresses: [10.1.0.5]
  conditions:
    ready: true
ports:
- name: http
  port: 8080
  protocol: TCP
-- clusters/west/kustomization.yaml --
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- data/serviceimport-db.yaml
- data/service-derived-db.yaml
-- clusters/west/data/serviceimport-db.yaml --
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata:
  name: db
  namespace: data
spec:
  type: Headless
  ports:
  - name: pg
    port: 5432
    protocol: TCP
-- clusters/west/data/service-derived-db.yaml --
apiVersion: v1
kind: Service
metadata:
  name: derived-abcdefghij
  namespace: data
spec:
  clusterIP: None
  ipFamilyPolicy: SingleStack
  ipFamilies: [IPv6]
  ports:
  - name: pg
    port: 5432
    protocol: TCP
`

const otherScenario = `
-- clusters/solo/kustomization.yaml --
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ns.yaml
-- clusters/solo/ns.yaml --
apiVersion: v1
kind: Namespace
metadata:
  name: solo
`

// brokenScenario renders objects a real apiserver must refuse: a ServiceImport
// type outside the CRD's enum, and an IPv6-only Service with an IPv4 cluster IP.
const brokenScenario = `
-- clusters/broken/kustomization.yaml --
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- si.yaml
- svc.yaml
-- clusters/broken/si.yaml --
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata:
  name: bogus
  namespace: broken
spec:
  type: Bogus
  ports:
  - port: 80
-- clusters/broken/svc.yaml --
apiVersion: v1
kind: Service
metadata:
  name: mixed-family
  namespace: broken
spec:
  clusterIP: 10.96.0.10
  ipFamilies: [IPv6]
  ports:
  - port: 80
`

const missingResource = `
-- clusters/gap/kustomization.yaml --
resources:
- not-rendered.yaml
`

func writeArchives(t *testing.T, archives map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range archives {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunnerReadsOnlyClusterTrees(t *testing.T) {
	dir := writeArchives(t, map[string]string{
		"scenario.txtar": goodScenario,
		"other.txtar":    otherScenario,
		"notes.txt":      "-- clusters/ignored/kustomization.yaml --\n",
	})
	members, err := readMembers(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range members {
		got = append(got, m.String())
	}
	want := []string{"other/clusters/solo", "scenario/clusters/east", "scenario/clusters/west"}
	if !slices.Equal(got, want) {
		t.Fatalf("members = %q, want %q", got, want)
	}
	east := members[1]
	var files []string
	for f := range east.files {
		files = append(files, f)
	}
	slices.Sort(files)
	wantFiles := []string{
		"kustomization.yaml", "namespace-shop.yaml",
		"shop/endpointslice-cart-west.yaml", "shop/service-derived-cart.yaml", "shop/serviceimport-cart.yaml",
	}
	if !slices.Equal(files, wantFiles) {
		t.Fatalf("east files = %q, want %q", files, wantFiles)
	}
}

func TestRunnerFailsWithoutFixtures(t *testing.T) {
	for name, archives := range map[string]map[string]string{
		"empty dir":        nil,
		"no cluster trees": {"inputs-only.txtar": "-- inputs/a.yaml --\nkind: x\n-- clusters/loose.yaml --\n"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readMembers(writeArchives(t, archives))
			if !errors.Is(err, errNoFixtures) {
				t.Fatalf("readMembers: err = %v, want errNoFixtures", err)
			}
		})
	}
}

func TestRunnerBuildsKustomization(t *testing.T) {
	members, err := readMembers(writeArchives(t, map[string]string{"scenario.txtar": goodScenario}))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := members[0].build()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, envtest.Describe(o))
	}
	slices.Sort(got)
	want := []string{
		"discovery.k8s.io/v1 EndpointSlice shop/cart-west",
		"multicluster.x-k8s.io/v1beta1 ServiceImport shop/cart",
		"v1 Namespace shop",
		"v1 Service shop/derived-0123456789",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("built %q, want %q", got, want)
	}

	gap, err := readMembers(writeArchives(t, map[string]string{"gap.txtar": missingResource}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gap[0].build(); err == nil || !strings.Contains(err.Error(), "gap/clusters/gap") {
		t.Fatalf("build of a kustomization with a missing resource: err = %v, want an error naming gap/clusters/gap", err)
	}
}

func TestRunnerAppliesTempFixture(t *testing.T) {
	good, err := readMembers(writeArchives(t, map[string]string{"scenario.txtar": goodScenario}))
	if err != nil {
		t.Fatal(err)
	}
	broken, err := readMembers(writeArchives(t, map[string]string{"broken.txtar": brokenScenario}))
	if err != nil {
		t.Fatal(err)
	}
	clusters := envtest.Start(t, 3)

	runMembers(t, good, clusters)
	if t.Failed() {
		t.FailNow()
	}

	ctx := t.Context()
	// east is member 0 → cluster-1, west is member 1 → cluster-2.
	c1, c2 := clusters[0].Client, clusters[1].Client
	err = c1.Get(ctx, types.NamespacedName{Namespace: "shop", Name: "cart"}, &mcsv1beta1.ServiceImport{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("dry-run left ServiceImport shop/cart behind in cluster-1: Get err = %v, want NotFound", err)
	}
	if err := c2.Get(ctx, types.NamespacedName{Name: "data"}, &corev1.Namespace{}); err != nil {
		t.Errorf("namespace data for member west should have been created in cluster-2: %v", err)
	}
	err = c1.Get(ctx, types.NamespacedName{Name: "data"}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace data appeared in cluster-1, but member west belongs to cluster-2: Get err = %v", err)
	}

	_, err = broken[0].check(ctx, clusters[2].Client)
	if err == nil {
		t.Fatal("broken member passed the dry-run apply; the apiserver should have rejected it")
	}
	for _, want := range []string{
		"broken/clusters/broken",
		"multicluster.x-k8s.io/v1beta1 ServiceImport broken/bogus",
		"v1 Service broken/mixed-family",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q:\n%v", want, err)
		}
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("error should carry the apiserver's Invalid status: %v", err)
	}
}
