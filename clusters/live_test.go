// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/faults"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// labelled adds labels to o, as one of the objects mcs-gitops applies
// carries them.
func labelled[T client.Object](o T, labels map[string]string) T {
	l := o.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	o.SetLabels(l)
	return o
}

// slice is svc's slice with one ready endpoint.
func slice(svc *corev1.Service, name string) *discoveryv1.EndpointSlice {
	return tenant.Slice(svc, name, discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.5")...)
}

var ours = map[string]string{
	"app.kubernetes.io/managed-by":           "mcs-gitops",
	"endpointslice.kubernetes.io/managed-by": "mcs-gitops.io",
}

// seedCluster1 creates exported and unexported services, the slices of
// both, a slice mcs-gitops applied, an export without a Service, a
// namespace with several exports (the list path) and the cluster ID.
func seedCluster1(t *testing.T, c client.Client) {
	t.Helper()
	installClusterPropertyCRD(t, c)
	cp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
		"metadata": map[string]any{"name": snapshot.ClusterIDProperty},
		"spec":     map[string]any{"value": "c1-id"},
	}}
	httpbin, other := tenant.Service("httpbin", "httpbin"), tenant.Service("httpbin", "other")
	postgres, redis, unexported := tenant.Headless("db", "postgres"), tenant.Service("db", "redis"), tenant.Service("db", "unexported")
	tenant.Create(t, c, cp,
		tenant.Namespace("httpbin"), tenant.Namespace("db"), tenant.Namespace("quiet"),
		httpbin, tenant.Export("httpbin", "httpbin"),
		slice(httpbin, "httpbin-abc"),
		labelled(slice(httpbin, "httpbin-imported"), ours),
		other, slice(other, "other-abc"),
		tenant.Export("httpbin", "ghost"),
		postgres, tenant.Export("db", "postgres"), slice(postgres, "postgres-1"),
		redis, tenant.Export("db", "redis"), slice(redis, "redis-1"),
		unexported, slice(unexported, "unexported-1"),
		gtp("httpbin", "httpbin", v1alpha1.FailOver, "//default/cluster-2"),
		gtp("db", "postgres", v1alpha1.Locality),
	)
	// Status mcs-gitops wrote back is not part of the snapshot.
	p := &v1alpha1.GlobalTrafficPolicy{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "httpbin", Name: "httpbin"}, p); err != nil {
		t.Fatal(err)
	}
	p.Status.Clusters = []string{"c1-id"}
	if err := c.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// kubectlGet is what `kubectl get -o yaml` prints for the named objects:
// apiVersion and kind set, managedFields hidden.
func kubectlGet(t *testing.T, c client.Client, objs ...client.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, o := range objs {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatalf("get %s/%s: %v", o.GetNamespace(), o.GetName(), err)
		}
		gvks, _, err := envtest.Scheme().ObjectKinds(o)
		if err == nil && len(gvks) > 0 {
			o.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
		o.SetManagedFields(nil)
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes()
}

func memberSet(t *testing.T, members ...*clusters.Member) *clusters.Set {
	t.Helper()
	s, err := clusters.NewSet(members...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func result(t *testing.T, results []clusters.Result, member string) clusters.Result {
	t.Helper()
	for _, r := range results {
		if r.Member == member {
			return r
		}
	}
	t.Fatalf("no result for %s", member)
	return clusters.Result{}
}

// watchedUntilReused runs set's Watch until the test ends, and returns its
// notifications and a Collect of member (bounded by timeout) once a read
// of it is reused: the watch has listed and a read was kept.
func watchedUntilReused(t *testing.T, set *clusters.Set, member string, timeout time.Duration) (notifications, func(*clusters.Set) clusters.Result) {
	t.Helper()
	wctx, cancel := context.WithCancel(context.Background())
	n := make(notifications, 256)
	done := make(chan error, 1)
	go func() { done <- set.Watch(wctx, n.notify) }()
	t.Cleanup(func() { cancel(); <-done })
	collect := func(s *clusters.Set) clusters.Result {
		t.Helper()
		return result(t, s.Collect(context.Background(), timeout), member)
	}
	begin := time.Now()
	for r := collect(set); !r.Reused; r = collect(set) {
		if r.Err != nil || time.Since(begin) > 15*time.Second {
			t.Fatalf("never reused within 15 s (err %v)", r.Err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n, collect
}

func TestLive(t *testing.T) {
	cs := envtest.Start(t, 3)
	c1, c2, c3 := cs[0], cs[1], cs[2]
	seedCluster1(t, c1.Client)
	tenant.Create(t, c2.Client, tenant.Namespace("only-in-2"), tenant.Service("only-in-2", "web"), tenant.Export("only-in-2", "web"))
	ctx := context.Background()

	t.Run("Collect reads only what is exported, as Parse would", func(t *testing.T) {
		set := memberSet(t, &clusters.Member{Name: "cluster-1", Config: c1.Config})
		res := set.Collect(ctx, 10*time.Second)
		r := result(t, res, "cluster-1")
		if r.Err != nil {
			t.Fatalf("Collect: %v (%s)", r.Err, r.Reason)
		}
		var nsList corev1.NamespaceList
		if err := c1.Client.List(ctx, &nsList); err != nil {
			t.Fatal(err)
		}
		var want []client.Object
		for i := range nsList.Items {
			want = append(want, &nsList.Items[i])
		}
		cp := &unstructured.Unstructured{}
		cp.SetAPIVersion("about.k8s.io/v1alpha1")
		cp.SetKind("ClusterProperty")
		cp.SetName(snapshot.ClusterIDProperty)
		want = append(want, cp,
			&mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "httpbin"}},
			&mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "ghost"}},
			&mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "postgres"}},
			&mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "redis"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "httpbin"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "postgres"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "redis"}},
			&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "httpbin-abc"}},
			&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "postgres-1"}},
			&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "redis-1"}},
			&v1alpha1.GlobalTrafficPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "httpbin"}},
			&v1alpha1.GlobalTrafficPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "postgres"}},
			&networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: snapshot.DefaultServiceCIDR}},
		)
		file := kubectlGet(t, c1.Client, want...)
		parsed, err := snapshot.Parse("cluster-1", "kubectl-get.yaml", file)
		if err != nil {
			t.Fatal(err)
		}
		// Where the ID was read differs by nature: a line of the file here,
		// nothing for a live read (the loop parses its own file again).
		parsed.ClusterIDAt = r.Snapshot.ClusterIDAt
		if !reflect.DeepEqual(parsed, r.Snapshot) {
			got, _ := yaml.Marshal(r.Snapshot)
			exp, _ := yaml.Marshal(parsed)
			t.Fatalf("collected snapshot differs from Parse of kubectl output\ncollected:\n%s\nparsed:\n%s", got, exp)
		}
		if r.Snapshot.ClusterID != "c1-id" || len(r.Snapshot.EndpointSlices) != 3 || len(r.Snapshot.Services) != 3 {
			t.Errorf("unexpected snapshot: id %q, %d slices, %d services", r.Snapshot.ClusterID, len(r.Snapshot.EndpointSlices), len(r.Snapshot.Services))
		}
		if got, want := r.Snapshot.IPFamilies(), []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}; !reflect.DeepEqual(got, want) {
			t.Errorf("IP families from the ServiceCIDRs = %v, want %v (envtest's dual-stack range)", got, want)
		}
		if ps := r.Snapshot.GlobalTrafficPolicies; len(ps) != 2 || ps[0].Name != "postgres" || len(ps[1].Status.Clusters) != 0 {
			t.Errorf("policies: %+v, want db/postgres and httpbin/httpbin without status", ps)
		}
		// The formatted input is stable: collecting again gives the same bytes.
		a, err := snapshot.Format(r.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		again := result(t, set.Collect(ctx, 10*time.Second), "cluster-1").Snapshot
		b, _ := snapshot.Format(again)
		if !bytes.Equal(a, b) {
			t.Error("two collections of an unchanged cluster format differently")
		}
		// What lets snapshot.NormalizeCache skip normalizing an unchanged
		// member: two collections are equal as values, not only as bytes.
		if !reflect.DeepEqual(r.Snapshot, again) {
			t.Error("two collections of an unchanged cluster are not reflect.DeepEqual")
		}
	})

	t.Run("an object the apiserver accepted but that does not load is left out and recorded", func(t *testing.T) {
		bad := tenant.Export("tenant", "odd")
		// The ServiceExport CRD does not check exportedLabels keys; a
		// ServiceImport could not carry this one.
		bad.Spec.ExportedLabels = map[string]string{"team/a/b": "x"}
		tenant.Create(t, c3.Client, tenant.Namespace("tenant"), tenant.Service("tenant", "odd"), bad, tenant.Service("tenant", "fine"), tenant.Export("tenant", "fine"))
		set := memberSet(t, &clusters.Member{Name: "cluster-3", Config: c3.Config})
		r := result(t, set.Collect(ctx, 10*time.Second), "cluster-3")
		if r.Err != nil {
			t.Fatalf("Collect: %v", r.Err)
		}
		if len(r.Snapshot.ServiceExports) != 1 || r.Snapshot.ServiceExports[0].Name != "fine" {
			t.Errorf("exports %v, want only tenant/fine", r.Snapshot.ServiceExports)
		}
		if rj := r.Snapshot.Rejected; len(rj) != 1 || rj[0].Kind != "ServiceExport" || rj[0].Service != "odd" ||
			!strings.Contains(rj[0].Message, `spec.exportedLabels["team/a/b"]`) {
			t.Errorf("rejected %+v, want tenant/odd's exportedLabels named", rj)
		}
		b, err := snapshot.Format(r.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snapshot.Parse("cluster-3", "inputs/cluster-3.yaml", b); err != nil {
			t.Errorf("the formatted snapshot does not load again: %v", err)
		}
	})

	t.Run("an object listed again unchanged is not parsed again; a changed one is", func(t *testing.T) {
		bad := tenant.Export("memo", "odd")
		bad.Spec.ExportedLabels = map[string]string{"team/a/b": "x"}
		fine := tenant.Export("memo", "fine")
		tenant.Create(t, c2.Client, tenant.Namespace("memo"), tenant.Service("memo", "odd"), bad, tenant.Service("memo", "fine"), fine)
		t.Cleanup(func() { // the later subtests count cluster-2's exports
			for _, o := range []client.Object{bad, fine} {
				if err := c2.Client.Delete(ctx, o); err != nil {
					t.Error(err)
				}
			}
		})
		m := &clusters.Member{Name: "cluster-2", Config: c2.Config}
		set := memberSet(t, m)
		collect := func() *snapshot.Snapshot {
			t.Helper()
			r := result(t, set.Collect(ctx, 10*time.Second), "cluster-2")
			if r.Err != nil {
				t.Fatalf("Collect: %v", r.Err)
			}
			return r.Snapshot
		}
		exports := func(s *snapshot.Snapshot) (names []string) {
			for _, se := range s.ServiceExports {
				names = append(names, se.Namespace+"/"+se.Name)
			}
			for _, rj := range s.Rejected {
				names = append(names, "rejected "+rj.Namespace+"/"+rj.Name+": "+rj.Message)
			}
			return names
		}
		first := collect()
		_, parsed := clusters.ParseMemoStats(m)
		if parsed != 3 {
			t.Fatalf("first read parsed %d exports, want 3 (only-in-2/web, memo/fine, memo/odd)", parsed)
		}
		again := collect()
		if hits, misses := clusters.ParseMemoStats(m); hits != 3 || misses != 3 {
			t.Errorf("second read of an unchanged member: %d remembered, %d parsed in all; want 3 and still 3", hits, misses)
		}
		if got, want := exports(again), exports(first); !reflect.DeepEqual(got, want) {
			t.Errorf("remembered parse gives %q, the first read gave %q", got, want)
		}
		// A write changes the resourceVersion: the changed object is
		// parsed again and the change is seen.
		var live mcsv1alpha1.ServiceExport
		if err := c2.Client.Get(ctx, client.ObjectKeyFromObject(fine), &live); err != nil {
			t.Fatal(err)
		}
		live.Spec.ExportedLabels = map[string]string{"tier": "gold"}
		if err := c2.Client.Update(ctx, &live); err != nil {
			t.Fatal(err)
		}
		changed := collect()
		if _, misses := clusters.ParseMemoStats(m); misses != 4 {
			t.Errorf("after one export changed: %d parsed in all, want 4", misses)
		}
		for _, se := range changed.ServiceExports {
			if se.Name == "fine" && se.Spec.ExportedLabels["tier"] != "gold" {
				t.Errorf("the changed export read as %+v", se.Spec)
			}
		}
		if rj := changed.Rejected; len(rj) != 1 || rj[0].Name != "odd" {
			t.Errorf("the remembered rejection is still reported: %+v", rj)
		}
	})

	t.Run("while a watch runs, an unchanged member is not listed again; a changed or forgotten one is", func(t *testing.T) {
		p := newProxy(t, strings.Trim(strings.TrimPrefix(c2.Config.Host, "https://"), "/"))
		p.start()
		set := memberSet(t, &clusters.Member{Name: "cluster-2", Config: withHost(c2.Config, p.addr)})
		direct := memberSet(t, &clusters.Member{Name: "cluster-2", Config: c2.Config}) // never watched
		// Once the watch has listed, a read is kept and the next reused.
		n, collect := watchedUntilReused(t, set, "cluster-2", 2*time.Second)
		reused, fresh := collect(set), collect(direct)
		if !reused.Reused || fresh.Reused {
			t.Fatalf("reused %v, unwatched member reused %v", reused.Reused, fresh.Reused)
		}
		if !reflect.DeepEqual(reused.Snapshot, fresh.Snapshot) {
			t.Error("the reused snapshot differs from a read of the member")
		}

		var se mcsv1alpha1.ServiceExport
		if err := c2.Client.Get(ctx, client.ObjectKey{Namespace: "only-in-2", Name: "web"}, &se); err != nil {
			t.Fatal(err)
		}
		se.Spec.ExportedLabels = map[string]string{"seen": "yes"}
		n.settle(200 * time.Millisecond) // the notification waited for is this change's
		if err := c2.Client.Update(ctx, &se); err != nil {
			t.Fatal(err)
		}
		n.waitFor(t, "cluster-2", 10*time.Second)
		changed := collect(set)
		if changed.Reused || changed.Err != nil || len(changed.Snapshot.ServiceExports) != 1 ||
			changed.Snapshot.ServiceExports[0].Spec.ExportedLabels["seen"] != "yes" {
			t.Fatalf("after a change the watch saw: reused %v, err %v, exports %+v", changed.Reused, changed.Err, changed.Snapshot)
		}
		if !collect(set).Reused {
			t.Error("the read after the change is not reused")
		}
		set.Forget()
		if collect(set).Reused {
			t.Error("reused after Forget")
		}

		p.stop()
		if down := collect(set); down.Err == nil || down.Reused {
			t.Errorf("a member that stopped answering: reused %v, err %v; want an error", down.Reused, down.Err)
		}
	})

	t.Run("while a watch runs, changes in a few namespaces list those alone and give what a whole read gives", func(t *testing.T) {
		for _, ns := range []string{"part-a", "part-b", "part-c"} {
			svc := tenant.Service(ns, "api", tenant.HTTP())
			tenant.Create(t, c3.Client, tenant.Namespace(ns), svc, tenant.Export(ns, "api"),
				tenant.Slice(svc, "api-1", discoveryv1.AddressTypeIPv4, tenant.Ready("10.3.0.1")...))
		}
		set := memberSet(t, &clusters.Member{Name: "cluster-3", Config: c3.Config})
		direct := memberSet(t, &clusters.Member{Name: "cluster-3", Config: c3.Config}) // never watched
		n, collect := watchedUntilReused(t, set, "cluster-3", 5*time.Second)
		// step makes a change, waits for the watch to see it, and checks
		// which namespaces the next read listed and that it gives what a
		// whole read of the member gives.
		step := func(name string, want []string, change func()) {
			t.Helper()
			n.settle(200 * time.Millisecond)
			change()
			n.waitFor(t, "cluster-3", 10*time.Second)
			n.settle(300 * time.Millisecond) // every event of the change seen
			got, whole := collect(set), collect(direct)
			if got.Err != nil || whole.Err != nil {
				t.Fatalf("%s: %v / %v", name, got.Err, whole.Err)
			}
			if got.Reused || !slices.Equal(got.Namespaces, want) {
				t.Errorf("%s: reused %v, listed namespaces %v; want %v", name, got.Reused, got.Namespaces, want)
			}
			if !reflect.DeepEqual(got.Snapshot, whole.Snapshot) {
				t.Errorf("%s: the snapshot differs from a whole read:\n%s", name, cmp.Diff(whole.Snapshot, got.Snapshot))
			}
			if r := collect(set); !r.Reused {
				t.Errorf("%s: the read after it is not reused", name)
			}
		}
		step("a slice moved", []string{"part-a"}, func() {
			var sl discoveryv1.EndpointSlice
			require.NoError(t, c3.Client.Get(ctx, client.ObjectKey{Namespace: "part-a", Name: "api-1"}, &sl))
			sl.Endpoints[0].Addresses = []string{"10.3.0.2"}
			require.NoError(t, c3.Client.Update(ctx, &sl))
		})
		step("an export added in one namespace, a Service deleted in another", []string{"part-b", "part-c"}, func() {
			svc := tenant.Service("part-b", "web", tenant.HTTP())
			tenant.Create(t, c3.Client, svc, tenant.Export("part-b", "web"),
				tenant.Slice(svc, "web-1", discoveryv1.AddressTypeIPv4, tenant.Ready("10.3.1.1")...))
			require.NoError(t, c3.Client.Delete(ctx, tenant.Service("part-c", "api")))
		})
		step("a Namespace labelled: not in a namespace, the member is read whole", nil, func() {
			var ns corev1.Namespace
			require.NoError(t, c3.Client.Get(ctx, client.ObjectKey{Name: "part-a"}, &ns))
			ns.Labels = map[string]string{"team": "a", corev1.LabelMetadataName: "part-a"}
			require.NoError(t, c3.Client.Update(ctx, &ns))
		})
		step("an export deleted", []string{"part-a"}, func() {
			require.NoError(t, c3.Client.Delete(ctx, tenant.Export("part-a", "api")))
		})
	})

	t.Run("a stopped or hung member fails with a reason within the timeout, the others succeed", func(t *testing.T) {
		p := newProxy(t, strings.Trim(strings.TrimPrefix(c2.Config.Host, "https://"), "/"))
		p.start()
		set := memberSet(t,
			&clusters.Member{Name: "cluster-1", Config: c1.Config},
			&clusters.Member{Name: "cluster-2", Config: withHost(c2.Config, p.addr)},
			&clusters.Member{Name: "hung", Config: withHost(c3.Config, faults.BlackHole(t))},
		)
		const timeout = 2 * time.Second
		res := set.Collect(ctx, timeout)
		if r := result(t, res, "cluster-2"); r.Err != nil || len(r.Snapshot.ServiceExports) != 1 {
			t.Fatalf("cluster-2 through the proxy: %v", r.Err)
		}
		p.stop()
		begin := time.Now()
		res = set.Collect(ctx, timeout)
		took := time.Since(begin)
		if took > timeout+time.Second {
			t.Errorf("Collect took %s with a %s timeout", took, timeout)
		}
		if r := result(t, res, "cluster-1"); r.Err != nil || r.Snapshot == nil {
			t.Errorf("cluster-1: %v", r.Err)
		}
		if r := result(t, res, "cluster-2"); r.Err == nil || r.Reason != clusters.ReasonUnreachable || !strings.Contains(r.Err.Error(), `"cluster-2"`) {
			t.Errorf("stopped cluster-2: err %v reason %q, want %s naming the member", r.Err, r.Reason, clusters.ReasonUnreachable)
		}
		if r := result(t, res, "hung"); r.Err == nil || r.Reason != clusters.ReasonTimeout {
			t.Errorf("hung member: err %v reason %q, want %s", r.Err, r.Reason, clusters.ReasonTimeout)
		}
		names := []string{res[0].Member, res[1].Member, res[2].Member}
		if !reflect.DeepEqual(names, []string{"cluster-1", "cluster-2", "hung"}) {
			t.Errorf("results not in config order: %v", names)
		}
	})

	t.Run("rejected credentials and missing permissions", func(t *testing.T) {
		const token = "not-a-real-token-3f9c2a"
		bad := &rest.Config{Host: c2.Config.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: c2.Config.CAData}}
		nobody := rest.CopyConfig(c2.Config)
		nobody.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
		set := memberSet(t,
			&clusters.Member{Name: "bad-token", Config: bad},
			&clusters.Member{Name: "nobody", Config: nobody},
		)
		res := set.Collect(ctx, 5*time.Second)
		if r := result(t, res, "bad-token"); r.Reason != clusters.ReasonUnauthorized || strings.Contains(r.Err.Error(), token) {
			t.Errorf("bad token: reason %q err %v", r.Reason, r.Err)
		}
		if r := result(t, res, "nobody"); r.Reason != clusters.ReasonForbidden {
			t.Errorf("no permissions: reason %q err %v", r.Reason, r.Err)
		}
	})

	t.Run("kubeconfig file with context, relative to BaseDir", func(t *testing.T) {
		dir := t.TempDir()
		kc := kubeconfigFor(t, c1.Config, "one")
		two := kubeconfigFor(t, c2.Config, "two")
		kc.Clusters["two"], kc.Contexts["two"] = two.Clusters["two"], two.Contexts["two"]
		// Certificates as files next to the kubeconfig, referenced relatively.
		writeFile(t, dir+"/kubeconfigs/two.crt", c2.Config.CertData)
		writeFile(t, dir+"/kubeconfigs/two.key", c2.Config.KeyData)
		kc.AuthInfos["two"] = clientcmdAuth{ClientCertificate: "two.crt", ClientKey: "two.key"}.info()
		writeFile(t, dir+"/kubeconfigs/all.yaml", writeKubeconfig(t, kc))
		cfg := &v1alpha1.ClusterSet{Spec: v1alpha1.ClusterSetSpec{Members: []v1alpha1.Member{
			{Name: "a", Kubeconfig: v1alpha1.KubeconfigRef{Path: "kubeconfigs/all.yaml"}},
			{Name: "b", Kubeconfig: v1alpha1.KubeconfigRef{Path: "kubeconfigs/all.yaml", Context: "two"}},
			{Name: "c", Kubeconfig: v1alpha1.KubeconfigRef{Path: "kubeconfigs/all.yaml", Context: "three"}},
			{Name: "d", Kubeconfig: v1alpha1.KubeconfigRef{Path: "kubeconfigs/missing.yaml"}},
			{Name: "e", Kubeconfig: v1alpha1.KubeconfigRef{InCluster: true}},
			{Name: "f"},
		}}}
		set := clusters.Connect(ctx, cfg, clusters.ConnectOptions{
			BaseDir:         dir,
			InClusterConfig: func() (*rest.Config, error) { return c3.Config, nil },
		})
		if got := len(set.Members()); got != 6 || set.Member("b") == nil || set.Member("zz") != nil {
			t.Fatalf("Members/Member: %d members", got)
		}
		res := set.Collect(ctx, 10*time.Second)
		if r := result(t, res, "a"); r.Err != nil || r.Snapshot.ClusterID != "c1-id" {
			t.Errorf("current context: %v", r.Err)
		}
		if r := result(t, res, "b"); r.Err != nil || len(r.Snapshot.ServiceExports) != 1 || r.Snapshot.ServiceExports[0].Namespace != "only-in-2" {
			t.Errorf("context two: %v", r.Err)
		}
		if r := result(t, res, "e"); r.Err != nil {
			t.Errorf("in-cluster: %v", r.Err)
		}
		for m, want := range map[string]string{"c": `context "three" does not exist`, "d": "does not exist", "f": "no kubeconfig configured"} {
			r := result(t, res, m)
			if r.Reason != clusters.ReasonConfig || r.Err == nil || !strings.Contains(r.Err.Error(), want) {
				t.Errorf("member %s: reason %q err %v, want Config and %q", m, r.Reason, r.Err, want)
			}
			if set.Member(m).Err == nil {
				t.Errorf("member %s: Member.Err not set", m)
			}
		}
	})

	t.Run("kubeconfig from a Cluster API Secret in the management cluster", func(t *testing.T) {
		mgmt := c1.Client
		tenant.Create(t, mgmt, tenant.Namespace("capi"))
		good := writeKubeconfig(t, kubeconfigFor(t, c2.Config, "cluster-2-admin@cluster-2"))
		const secretToken = "sekrit-token-d41d8cd98f"
		garbage := []byte("apiVersion: v1\nkind: Config\nusers: " + secretToken + "\n")
		exec := kubeconfigFor(t, c2.Config, "x")
		exec.AuthInfos["x"] = clientcmdAuth{Exec: true}.info()
		for name, data := range map[string][]byte{"cluster-2-kubeconfig": good, "garbage-kubeconfig": garbage, "exec-kubeconfig": writeKubeconfig(t, exec)} {
			tenant.Create(t, mgmt, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: name}, Data: map[string][]byte{"value": data}})
		}
		ref := func(name, key string) v1alpha1.KubeconfigRef {
			return v1alpha1.KubeconfigRef{SecretRef: &v1alpha1.SecretKeyRef{Namespace: "capi", Name: name, Key: key}}
		}
		cfg := &v1alpha1.ClusterSet{Spec: v1alpha1.ClusterSetSpec{Members: []v1alpha1.Member{
			{Name: "cluster-2", Kubeconfig: ref("cluster-2-kubeconfig", "")},
			{Name: "garbage", Kubeconfig: ref("garbage-kubeconfig", "value")},
			{Name: "exec", Kubeconfig: ref("exec-kubeconfig", "value")},
			{Name: "nokey", Kubeconfig: ref("cluster-2-kubeconfig", "kubeconfig")},
			{Name: "nosecret", Kubeconfig: ref("absent-kubeconfig", "")},
		}}}
		set := clusters.Connect(ctx, cfg, clusters.ConnectOptions{Management: mgmt})
		res := set.Collect(ctx, 10*time.Second)
		if r := result(t, res, "cluster-2"); r.Err != nil || len(r.Snapshot.ServiceExports) != 1 {
			t.Fatalf("cluster-2 from Secret: %v", r.Err)
		}
		for m, want := range map[string]string{
			"garbage":  "not a valid kubeconfig",
			"exec":     "exec plugin",
			"nokey":    `has no key "kubeconfig" (keys: value)`,
			"nosecret": "Secret capi/absent-kubeconfig does not exist",
		} {
			r := result(t, res, m)
			if r.Reason != clusters.ReasonConfig || r.Err == nil || !strings.Contains(r.Err.Error(), want) {
				t.Errorf("member %s: reason %q err %v, want Config and %q", m, r.Reason, r.Err, want)
				continue
			}
			if strings.Contains(r.Err.Error(), secretToken) || strings.Contains(r.Err.Error(), string(c2.Config.KeyData[40:80])) {
				t.Errorf("member %s: error leaks a credential: %v", m, r.Err)
			}
		}
		noMgmt := clusters.Connect(ctx, cfg, clusters.ConnectOptions{})
		if err := noMgmt.Member("cluster-2").Err; err == nil || !strings.Contains(err.Error(), "no management cluster") {
			t.Errorf("without a management client: %v", err)
		}
	})

	t.Run("gateway host resolution", func(t *testing.T) {
		testGatewayLookup(t, c1)
	})

	t.Run("Watch warms the REST mapper apply uses", func(t *testing.T) {
		// Discovery is /api, /apis (aggregated) or /apis/<group>/<version>.
		isDiscovery := func(p string) bool {
			parts := strings.Split(strings.Trim(p, "/"), "/")
			return (parts[0] == "api" && len(parts) <= 2) || (parts[0] == "apis" && len(parts) <= 3)
		}
		var mu sync.Mutex
		asked := 0
		cfg := rest.CopyConfig(c2.Config)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if isDiscovery(req.URL.Path) {
					mu.Lock()
					asked++
					mu.Unlock()
				}
				return rt.RoundTrip(req)
			})
		})
		set := memberSet(t, &clusters.Member{Name: "cluster-2", Config: cfg})
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- set.Watch(wctx, func(string) {}) }()
		defer func() { cancel(); <-done }()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n := asked
			mu.Unlock()
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no discovery within 10 s of the watch starting")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// What apply asks for next is known already.
		time.Sleep(time.Second) // the rest of the warm-up
		mu.Lock()
		warm := asked
		mu.Unlock()
		m := set.Members()[0]
		_, err := m.Client.RESTMapper().RESTMapping(schema.GroupKind{Group: mcsv1alpha1.GroupName, Kind: "ServiceImport"}, "v1alpha1")
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, warm, asked, "the mapping apply needs was discovered by the warm-up")
	})
	t.Run("Watch notifies on changes and survives down members", func(t *testing.T) {
		testWatch(t, c1, c2, c3)
	})

	t.Run("GlobalTrafficPolicy CRD missing is no error and is watched for", func(t *testing.T) {
		testPolicyCRDMissing(t, c2)
	})

	t.Run("ServiceExport CRD missing", func(t *testing.T) {
		cfg := rest.CopyConfig(c3.Config)
		var crd unstructured.Unstructured
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName("serviceexports.multicluster.x-k8s.io")
		if err := c3.Client.Delete(ctx, &crd); err != nil {
			t.Fatal(err)
		}
		set := memberSet(t, &clusters.Member{Name: "cluster-3", Config: cfg})
		// The CRD finalizer can take a minute on a loaded machine.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r := set.Collect(ctx, 5*time.Second)[0]
			if r.Reason == clusters.ReasonCRDMissing {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("reason %q err %v, want %s", r.Reason, r.Err, clusters.ReasonCRDMissing)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
