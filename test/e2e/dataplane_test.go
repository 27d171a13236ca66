// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/lab"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// labWorld is a world on the data-plane lab: the members run real
// kube-controller-manager, kube-proxy and CoreDNS, and pods that answer.
func labWorld(t testing.TB, stacks []envtest.Stack, extra string) (*world, *lab.Lab) {
	t.Helper()
	return labWorldWith(t, lab.Options{Stacks: stacks}, nil, extra)
}

// labWorldWith is labWorld with lab options, and memberYAML(m) appended to
// member m's entry in clusterset.yaml.
func labWorldWith(t testing.TB, opts lab.Options, memberYAML func(m *lab.Member) string, extra string) (*world, *lab.Lab) {
	t.Helper()
	l := lab.Start(t, opts)
	members := make([]*envtest.Cluster, len(l.Members))
	for i, m := range l.Members {
		members[i] = m.Cluster
	}
	var perMember func(i int) string
	if memberYAML != nil {
		perMember = func(i int) string { return memberYAML(l.Members[i]) }
	}
	return newWorldOn(t, members, perMember, extra), l
}

// serveEcho runs replicas echo pods behind Service ns/name in member m,
// answering HTTP on 8080 behind port 80 of the Service, and waits for
// them to be ready.
func serveEcho(t testing.TB, m *lab.Member, ns, name string, replicas int32) {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, envtest.EnsureNamespaces(ctx, m.Cluster.Client, ns))
	require.NoError(t, m.Cluster.Client.Create(ctx, m.EchoDeployment(ns, name, replicas, []int{8080}, nil)))
	svc := tenant.Service(ns, name, corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt(8080), Protocol: corev1.ProtocolTCP})
	svc.Spec.Selector = map[string]string{"app": name}
	require.NoError(t, m.Cluster.Client.Create(ctx, svc))
	_, err := m.WaitPods(ctx, ns, map[string]string{"app": name}, int(replicas))
	require.NoError(t, err)
	require.NoError(t, m.WaitEndpoints(ctx, ns, name, int(replicas)))
}

// clientPod runs one echo pod named client-* in ns of member m, to send
// requests from, and returns a client for it.
func clientPod(t testing.TB, m *lab.Member, ns string) *lab.Client {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, envtest.EnsureNamespaces(ctx, m.Cluster.Client, ns))
	require.NoError(t, m.Cluster.Client.Create(ctx, m.EchoDeployment(ns, "client", 1, []int{8080}, nil)))
	pods, err := m.WaitPods(ctx, ns, map[string]string{"app": "client"}, 1)
	require.NoError(t, err)
	c, err := m.PodClient(ns, pods[0].Name)
	require.NoError(t, err)
	return c
}

// answers sends n requests to url and counts the answers by cluster (the
// first word of an echo reply); failed requests count under "error".
func answers(ctx context.Context, c *lab.Client, url string, n int) map[string]int {
	got := map[string]int{}
	for range n {
		body, err := c.Get(ctx, url)
		if err != nil {
			got["error"]++
			continue
		}
		cluster, _, _ := strings.Cut(strings.TrimSpace(body), " ")
		got[cluster]++
	}
	return got
}

// TestDataPlaneClusterSetTraffic: a client in cluster-2 (IPv4-only) reaches
// web.demo through its ClusterSet name and its ClusterSet IP, and is
// answered by the pods of cluster-1 and cluster-3, which export it, and
// never by cluster-2's own web pods, whose Service is not exported. Once
// cluster-3 unexports, one sync later only cluster-1 answers.
func TestDataPlaneClusterSetTraffic(t *testing.T) {
	w, l := labWorld(t, []envtest.Stack{envtest.DualStack, envtest.IPv4Only, envtest.DualStack}, "")
	ctx := t.Context()
	c1, c2, c3 := l.Members[0], l.Members[1], l.Members[2]
	for _, m := range []*lab.Member{c1, c2, c3} {
		serveEcho(t, m, "demo", "web", 2)
	}
	for _, m := range []*lab.Member{c1, c3} {
		require.NoError(t, m.Cluster.Client.Create(ctx, tenant.Export("demo", "web")))
	}
	pc := clientPod(t, c2, "demo")
	w.sync()

	var si mcsv1alpha1.ServiceImport
	require.NoError(t, c2.Cluster.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, &si))
	require.NotEmpty(t, si.Spec.IPs, "ServiceImport in cluster-2 has no ClusterSet IP")
	name := "web.demo.svc.clusterset.local"
	ips, err := pc.LookupIP(ctx, name)
	require.NoError(t, err)
	require.Equal(t, si.Spec.IPs[0], ips[0].String(), "%s resolves to the ServiceImport's IP", name)

	// kube-proxy programs the derived Service a moment after the sync
	// applied it, as it would any new Service.
	waitAnswers(t, pc, "http://"+name+"/", "cluster-1", "cluster-3")
	var got map[string]int
	for _, url := range []string{"http://" + name + "/", "http://" + si.Spec.IPs[0] + "/"} {
		got = answers(ctx, pc, url, 40)
		t.Logf("%s: %v", url, got)
		require.Zero(t, got["error"], "failed requests to %s: %v", url, got)
		require.Zero(t, got["cluster-2"], "cluster-2's unexported web answered through %s: %v", url, got)
		require.Positive(t, got["cluster-1"], "cluster-1 never answered %s: %v", url, got)
		require.Positive(t, got["cluster-3"], "cluster-3 never answered %s: %v", url, got)
	}

	// Unexport under load: no request may fail (cluster-1 still serves),
	// and cluster-3 stops answering once kube-proxy has the sync's slices.
	tr := startTraffic(ctx, pc, "http://"+name+"/")
	unexport(t, c3.Cluster, "demo", "web")
	w.sync()
	synced := time.Now()
	res := tr.stopWhen(t, 15*time.Second, func(r []result) bool { return tail(r, 20, "cluster-1") })
	last := lastFrom(res, "cluster-3")
	t.Logf("unexport: %d requests, %d failed, cluster-3 last answered %s after the sync", len(res), count(res, "error"), last.Sub(synced).Round(time.Millisecond))
	require.Zero(t, count(res, "error"), "requests failed while cluster-3 unexported")
	require.Less(t, last.Sub(synced), 5*time.Second, "cluster-3 still answered long after the sync removed it")

	// cluster-1's apiserver goes down; its pods keep running. The next sync
	// cannot read it and keeps its exports, so the flat network still
	// carries the traffic, as the docs promise.
	require.NoError(t, c1.StopAPIServer())
	_, err = w.loop.Sync(ctx)
	require.ErrorContains(t, err, "cluster-1", "the sync names the member it could not read")
	got = answers(ctx, pc, "http://"+name+"/", 20)
	require.Equal(t, map[string]int{"cluster-1": 20}, got, "with its apiserver down, cluster-1's exported pods still answer")
}

// waitAnswers sends requests until every cluster in want has answered
// one: kube-proxy may program one exporter's slices a second before the
// other's (it syncs at most once a second).
func waitAnswers(t testing.TB, pc *lab.Client, url string, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if body, err := pc.Get(t.Context(), url); err == nil {
			cluster, _, _ := strings.Cut(strings.TrimSpace(body), " ")
			seen[cluster] = true
		}
		missing := 0
		for _, w := range want {
			if !seen[w] {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 30 s answered by %v, want all of %v", url, seen, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// result is one request of a traffic run: when it returned and who
// answered ("error" for a failure).
type result struct {
	at     time.Time
	answer string
}

// traffic sends requests one after another from a pod until stopped.
type traffic struct {
	mu      sync.Mutex
	results []result
	cancel  context.CancelFunc
	done    chan struct{}
}

func startTraffic(ctx context.Context, c *lab.Client, url string) *traffic {
	ctx, cancel := context.WithCancel(ctx)
	tr := &traffic{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(tr.done)
		for ctx.Err() == nil {
			a := "error"
			if body, err := c.Get(ctx, url); err == nil {
				a, _, _ = strings.Cut(strings.TrimSpace(body), " ")
			} else if ctx.Err() != nil {
				return
			}
			tr.mu.Lock()
			tr.results = append(tr.results, result{at: time.Now(), answer: a})
			tr.mu.Unlock()
		}
	}()
	return tr
}

// stopWhen stops the traffic once done holds for the results so far, or
// fails the test after timeout; it returns every result.
func (tr *traffic) stopWhen(t testing.TB, timeout time.Duration, done func([]result) bool) []result {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		tr.mu.Lock()
		r := append([]result(nil), tr.results...)
		tr.mu.Unlock()
		if done(r) || time.Now().After(deadline) {
			tr.cancel()
			<-tr.done
			if !done(r) {
				t.Fatalf("traffic did not settle in %s; last answers: %v", timeout, r[max(0, len(r)-20):])
			}
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail reports whether the last n results were all answered by want.
func tail(r []result, n int, want string) bool {
	if len(r) < n {
		return false
	}
	for _, x := range r[len(r)-n:] {
		if x.answer != want {
			return false
		}
	}
	return true
}

func count(r []result, answer string) int {
	n := 0
	for _, x := range r {
		if x.answer == answer {
			n++
		}
	}
	return n
}

// lastFrom is when answer last appeared, or the zero time.
func lastFrom(r []result, answer string) time.Time {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i].answer == answer {
			return r[i].at
		}
	}
	return time.Time{}
}

// TestDataPlaneHeadlessAndPortConflict: through a member that exports
// nothing, a headless export's pods are reached by
// <hostname>.<clusterid>.<svc>.<ns>.svc.clusterset.local, and a port only
// one exporter's Service has is answered only by that exporter's pods
// (KEP-1645 "Service Port": the import has the union of ports).
func TestDataPlaneHeadlessAndPortConflict(t *testing.T) {
	w, l := labWorld(t, []envtest.Stack{envtest.DualStack, envtest.DualStack, envtest.DualStack}, "")
	ctx := t.Context()
	c1, c2, c3 := l.Members[0], l.Members[1], l.Members[2]

	// Headless: db-0 in cluster-1, db-0 in cluster-3: same hostname,
	// told apart by cluster ID.
	for _, m := range []*lab.Member{c1, c3} {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Cluster.Client, "data"))
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "data", Labels: map[string]string{"app": "db"}},
			Spec: corev1.PodSpec{Hostname: "db-0", Subdomain: "db", Containers: []corev1.Container{{
				Name: "echo", Image: lab.EchoImage, Args: lab.EchoArgs(m.Name, []int{8080}, nil),
			}}},
		}
		require.NoError(t, m.Cluster.Client.Create(ctx, pod))
		svc := tenant.Headless("data", "db", corev1.ServicePort{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP})
		svc.Spec.Selector = map[string]string{"app": "db"}
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
		require.NoError(t, m.Cluster.Client.Create(ctx, svc))
		require.NoError(t, m.Cluster.Client.Create(ctx, tenant.Export("data", "db")))
		_, err := m.WaitPods(ctx, "data", map[string]string{"app": "db"}, 1)
		require.NoError(t, err)
		require.NoError(t, m.WaitEndpoints(ctx, "data", "db", 1))
	}

	// Ports: cluster-1's web has http (80) and a raw TCP port (9000);
	// cluster-3's only http.
	for _, m := range []*lab.Member{c1, c3} {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Cluster.Client, "demo"))
		tcp := []int{}
		ports := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt(8080), Protocol: corev1.ProtocolTCP}}
		if m == c1 {
			tcp = []int{9000}
			ports = append(ports, corev1.ServicePort{Name: "raw", Port: 9000, Protocol: corev1.ProtocolTCP})
		}
		require.NoError(t, m.Cluster.Client.Create(ctx, m.EchoDeployment("demo", "web", 2, []int{8080}, tcp)))
		svc := tenant.Service("demo", "web", ports...)
		svc.Spec.Selector = map[string]string{"app": "web"}
		require.NoError(t, m.Cluster.Client.Create(ctx, svc))
		require.NoError(t, m.Cluster.Client.Create(ctx, tenant.Export("demo", "web")))
		_, err := m.WaitPods(ctx, "demo", map[string]string{"app": "web"}, 2)
		require.NoError(t, err)
		require.NoError(t, m.WaitEndpoints(ctx, "demo", "web", 2))
	}
	require.NoError(t, envtest.EnsureNamespaces(ctx, c2.Cluster.Client, "data"))
	pc := clientPod(t, c2, "demo")
	w.sync()

	for _, m := range []*lab.Member{c1, c3} {
		host := "db-0." + m.Name + ".db.data.svc.clusterset.local"
		body, err := pc.WaitGet(ctx, "http://"+host+":8080/", 30*time.Second)
		require.NoError(t, err, host)
		require.Equal(t, m.Name+" db-0\n", body, "%s reaches that cluster's pod", host)
	}
	ips, err := pc.LookupIP(ctx, "db.data.svc.clusterset.local")
	require.NoError(t, err)
	require.Len(t, ips, 4, "the headless name has both exporters' pods, in both families: %v", ips)

	web := "web.demo.svc.clusterset.local"
	waitAnswers(t, pc, "http://"+web+"/", "cluster-1", "cluster-3")
	got := answers(ctx, pc, "http://"+web+"/", 30)
	require.Zero(t, got["error"], "%v", got)
	require.Positive(t, got["cluster-3"], "both exporters serve the shared port: %v", got)
	raw := map[string]int{}
	for range 30 {
		conn, err := pc.DialContext(ctx, "tcp", web+":9000")
		if err != nil {
			raw["error"]++
			continue
		}
		line, _ := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		cluster, _, _ := strings.Cut(line, " ")
		raw[cluster]++
	}
	t.Logf("port 9000: %v", raw)
	require.Equal(t, map[string]int{"cluster-1": 30}, raw, "only cluster-1 has port 9000, so only its pods answer it")
}

// TestDataPlaneFailOver: cluster-2 serves web itself and exports it, as
// cluster-1 does; its FailOver policy keeps its clients on its own pods
// and moves them to cluster-1 when those go not ready. Under `run`, the
// requests move without one failing.
func TestDataPlaneFailOver(t *testing.T) {
	l, pc := failOverWorld(t)
	ctx := t.Context()
	c2 := l.Members[1]
	url := "http://web.demo.svc.clusterset.local/"
	tr := startTraffic(ctx, pc, url)
	tr.stopWhen(t, 60*time.Second, func(r []result) bool { return tail(r, 20, "cluster-2") })

	tr = startTraffic(ctx, pc, url)
	failed := time.Now()
	setReadiness(t, c2, pc, "demo", "web", false)
	res := tr.stopWhen(t, 30*time.Second, func(r []result) bool { return tail(r, 20, "cluster-1") })
	switched := lastFrom(res, "cluster-2")
	t.Logf("failover: %d requests, %d failed, last answer from cluster-2 %s after its pods went not ready",
		len(res), count(res, "error"), switched.Sub(failed).Round(time.Millisecond))
	require.Zero(t, count(res, "error"), "requests failed during the failover")
}

// failOverWorld: cluster-1 and cluster-2 both serve web and export it;
// cluster-2's FailOver policy prefers its own pods and falls back to
// cluster-1's. The loop runs (`run`); pc is a client pod in cluster-2.
func failOverWorld(t testing.TB) (*lab.Lab, *lab.Client) {
	t.Helper()
	w, l := labWorld(t, []envtest.Stack{envtest.DualStack, envtest.DualStack}, "    minCommitInterval: \"0\"\n")
	ctx := t.Context()
	c1, c2 := l.Members[0], l.Members[1]
	for _, m := range []*lab.Member{c1, c2} {
		serveEcho(t, m, "demo", "web", 2)
		require.NoError(t, m.Cluster.Client.Create(ctx, tenant.Export("demo", "web")))
	}
	require.NoError(t, c2.Cluster.Client.Create(ctx, &v1alpha1.GlobalTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web"},
		Spec: v1alpha1.GlobalTrafficPolicySpec{LbType: v1alpha1.FailOver, Targets: []v1alpha1.TrafficTarget{
			{ClusterKey: "//default/cluster-1"},
		}},
	}))
	pc := clientPod(t, c2, "demo")
	runLoop(t, w)
	return l, pc
}

// setReadiness makes every pod of app=name in member m fail its readiness
// probe from now on (the echo server's POST /readyz?fail=true), or pass it
// again, sent from the pod client pc straight to each pod IP.
func setReadiness(t testing.TB, m *lab.Member, pc *lab.Client, ns, name string, ready bool) {
	t.Helper()
	var pods corev1.PodList
	require.NoError(t, m.Cluster.Client.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}))
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		url := "http://" + net.JoinHostPort(p.Status.PodIP, "8080") + "/readyz?fail=" + strconv.FormatBool(!ready)
		require.NoError(t, pc.Post(t.Context(), url))
	}
}

// TestDataPlaneGatewayMode: cluster-1 exports web in gateway mode, behind
// a real Gateway API implementation (Traefik) on its node; cluster-2 is
// flat. A client in cluster-2 calls the ClusterSet name; the request goes
// to cluster-1's gateway address (the derived slices hold no pod of
// cluster-1), Traefik routes it by the HTTPRoute mcs-gitops applied, and
// cluster-1's pods answer. Traefik has no ListenerSet, so cluster-1 takes
// its TCP listeners in the Gateway itself (tcpListeners: Gateway): web's raw
// TCP port crosses the gateway on a listener merged into the user's Gateway
// beside its own HTTP listener, and once web is unexported only that
// listener goes.
func TestDataPlaneGatewayMode(t *testing.T) {
	gateway := func(m *lab.Member) string {
		if m.Name != "cluster-1" {
			return ""
		}
		return fmt.Sprintf("    mode: gateway\n    gateway:\n      host: %s\n      namespace: %s\n      name: %s\n      tcpPorts: {from: %d, to: %d}\n      tcpListeners: Gateway\n",
			m.GatewayHost(), lab.GatewayNamespace, lab.GatewayName, lab.GatewayTCPPorts[0], lab.GatewayTCPPorts[1])
	}
	w, l := labWorldWith(t, lab.Options{Stacks: []envtest.Stack{envtest.DualStack, envtest.DualStack}, Gateways: []string{"cluster-1"}}, gateway, "")
	ctx := t.Context()
	c1, c2 := l.Members[0], l.Members[1]
	// web answers HTTP on 80 and raw TCP on 9000, a port whose name does
	// not make it HTTP.
	require.NoError(t, envtest.EnsureNamespaces(ctx, c1.Cluster.Client, "demo"))
	require.NoError(t, c1.Cluster.Client.Create(ctx, c1.EchoDeployment("demo", "web", 2, []int{8080}, []int{9000})))
	svc := tenant.Service("demo", "web",
		corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt(8080), Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Name: "raw", Port: 9000, Protocol: corev1.ProtocolTCP})
	svc.Spec.Selector = map[string]string{"app": "web"}
	require.NoError(t, c1.Cluster.Client.Create(ctx, svc))
	pods, err := c1.WaitPods(ctx, "demo", map[string]string{"app": "web"}, 2)
	require.NoError(t, err)
	require.NoError(t, c1.WaitEndpoints(ctx, "demo", "web", 2))
	export := tenant.Export("demo", "web")
	require.NoError(t, c1.Cluster.Client.Create(ctx, export))
	pc := clientPod(t, c2, "demo")
	w.sync()

	var slices discoveryv1.EndpointSliceList
	require.NoError(t, c2.Cluster.Client.List(ctx, &slices, client.InNamespace("demo"),
		client.MatchingLabels{"multicluster.kubernetes.io/source-cluster": "cluster-1"}))
	var addrs []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			addrs = append(addrs, e.Addresses...)
		}
	}
	require.Equal(t, []string{c1.GatewayHost()}, addrs, "cluster-2 reaches cluster-1 through its gateway only")

	url := "http://web.demo.svc.clusterset.local/"
	_, err = pc.WaitGet(ctx, url, 30*time.Second)
	require.NoError(t, err, "through cluster-1's gateway")
	got := answers(ctx, pc, url, 20)
	t.Logf("through the gateway: %v", got)
	require.Equal(t, map[string]int{"cluster-1": 20}, got)

	// The raw port: the user's Gateway holds its own listener and ours.
	require.Equal(t, []string{"http", "mcs-tcp-30000"}, gatewayListeners(t, c1))
	names := map[string]bool{}
	for _, p := range pods {
		names["cluster-1 "+p.Name] = true
	}
	raw := "web.demo.svc.clusterset.local:9000"
	readLine := func() (string, error) {
		conn, err := pc.DialContext(ctx, "tcp", raw)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		if err := conn.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
			return "", err
		}
		line, err := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSpace(line), err
	}
	// Traefik programs the listener a moment after the apply.
	var first string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		first, err = readLine()
		if err == nil && names[first] || time.Now().After(deadline) {
			break
		}
	}
	require.True(t, names[first], "%s through cluster-1's gateway: last answer %q, error %v", raw, first, err)
	byPod := map[string]int{}
	for range 20 {
		line, err := readLine()
		if err != nil {
			line = "error: " + err.Error()
		}
		byPod[line]++
	}
	t.Logf("raw TCP through the gateway: %v", byPod)
	for line := range byPod {
		require.True(t, names[line], "%s answered %q, not one of cluster-1's web pods: %v", raw, line, byPod)
	}

	// Unexported, web needs no listener: ours goes, the user's stays, and
	// so does the Gateway.
	require.NoError(t, c1.Cluster.Client.Delete(ctx, export))
	w.sync()
	require.Equal(t, []string{"http"}, gatewayListeners(t, c1))
}

// gatewayListeners are the names of the listeners of member m's Gateway.
func gatewayListeners(t testing.TB, m *lab.Member) []string {
	t.Helper()
	gw := &unstructured.Unstructured{}
	gw.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"})
	require.NoError(t, m.Cluster.Client.Get(t.Context(), client.ObjectKey{Namespace: lab.GatewayNamespace, Name: lab.GatewayName}, gw))
	return envtest.ListenerNames(gw)
}

// TestDataPlaneStagedRollout: cluster-1 starts exporting web under a
// staged rollout (cluster-2 first, soaking an hour; the rest after). A
// client in cluster-2, in the first wave, is answered by cluster-1's
// pods through the ClusterSet name while a client in cluster-3, in the
// last wave, does not resolve the name at all. Once the first wave has
// soaked, the next commit brings cluster-3 in, and both are answered.
func TestDataPlaneStagedRollout(t *testing.T) {
	w, l := labWorldWith(t, lab.Options{Stacks: []envtest.Stack{envtest.DualStack, envtest.DualStack, envtest.DualStack}}, nil,
		"  rollout:\n    waves:\n    - name: first\n      members: {names: [cluster-2]}\n      soak: 1h\n")
	ck := &clock{}
	w.loop.Now = ck.now
	ctx := t.Context()
	c1, c2, c3 := l.Members[0], l.Members[1], l.Members[2]
	serveEcho(t, c1, "demo", "web", 2)
	pc2, pc3 := clientPod(t, c2, "demo"), clientPod(t, c3, "demo")
	w.sync() // the first commit: the members as they are, nothing staged

	require.NoError(t, c1.Cluster.Client.Create(ctx, tenant.Export("demo", "web")))
	w.loop.Members.Forget()
	w.sync()
	_, msg := w.remoteHead()
	require.True(t, strings.HasPrefix(msg, "roll out demo/web: wave 1 of 2 (first): cluster-2"), msg)
	name := "web.demo.svc.clusterset.local"
	waitAnswers(t, pc2, "http://"+name+"/", "cluster-1")
	got := answers(ctx, pc2, "http://"+name+"/", 20)
	require.Equal(t, map[string]int{"cluster-1": 20}, got, "the first wave is answered")
	_, err := pc3.LookupIP(ctx, name)
	require.Error(t, err, "the last wave does not resolve the name yet")

	ck.advance(time.Hour + time.Minute)
	out := w.sync()
	_, msg = w.remoteHead()
	require.True(t, strings.HasPrefix(msg, "roll out demo/web: wave 2 of 2 (rest): cluster-1, cluster-3"), msg)
	require.True(t, out.Committed)
	waitAnswers(t, pc3, "http://"+name+"/", "cluster-1")
	for _, pc := range []*lab.Client{pc2, pc3} {
		got = answers(ctx, pc, "http://"+name+"/", 20)
		require.Equal(t, map[string]int{"cluster-1": 20}, got, "after the last wave every member is answered")
	}
}
