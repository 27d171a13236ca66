// SPDX-License-Identifier: Apache-2.0

package lab_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/lab"
)

// TestLab proves the lab's parts work together before any multi-cluster
// test relies on them: a Deployment becomes Ready pods through the real
// controller manager and the node agent, its Service answers through
// kube-proxy and CoreDNS, pod IPs route across members, and exec goes
// through the apiserver to the node.
func TestLab(t *testing.T) {
	l := lab.Start(t, lab.Options{Stacks: []envtest.Stack{envtest.DualStack, envtest.IPv4Only, envtest.DualStack}})
	ctx := t.Context()
	m1, m2, m3 := l.Members[0], l.Members[1], l.Members[2]

	ns := "demo"
	for _, m := range l.Members {
		if err := m.Cluster.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m1.Cluster.Client.Create(ctx, m1.EchoDeployment(ns, "web", 2, []int{8080}, nil)); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"},
		Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt(8080)}},
	}}
	if err := m1.Cluster.Client.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := m2.Cluster.Client.Create(ctx, m2.EchoDeployment(ns, "client", 1, []int{8080}, nil)); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*lab.Member{m1, m3} {
		if err := m.Cluster.Client.Create(ctx, m.EchoDeployment(ns, "client", 1, []int{8080}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	web, err := m1.WaitPods(ctx, ns, map[string]string{"app": "web"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	c1pods, err := m1.WaitPods(ctx, ns, map[string]string{"app": "client"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	c2pods, err := m2.WaitPods(ctx, ns, map[string]string{"app": "client"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := m1.PodClient(ns, c1pods[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := m2.PodClient(ns, c2pods[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	c3pods, err := m3.WaitPods(ctx, ns, map[string]string{"app": "client"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	c3, err := m3.PodClient(ns, c3pods[0].Name)
	if err != nil {
		t.Fatal(err)
	}

	// Through the Service's name (CoreDNS) and cluster IP (kube-proxy):
	// both pods answer, once the endpointslice controller lists them and
	// kube-proxy has programmed the Service (each lags a little).
	if err := m1.WaitEndpoints(ctx, ns, "web", 2); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); len(seen) < 2 && time.Now().Before(deadline); {
		body, err := c1.Get(ctx, "http://web.demo.svc.cluster.local/")
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		seen[strings.TrimSpace(body)] = true
	}
	for _, p := range web {
		if !seen["cluster-1 "+p.Name] {
			t.Errorf("pod %s never answered through the Service in 30 s; answers: %v", p.Name, seen)
		}
	}

	// Across members, straight to pod IPs (the flat network): IPv4 from
	// the IPv4-only member, both families from the other dual-stack one.
	for _, from := range []struct {
		c        *lab.Client
		families int
	}{{c2, 1}, {c3, 2}} {
		for _, ip := range web[0].Status.PodIPs[:from.families] {
			url := "http://" + hostPort(ip.IP, "8080") + "/"
			body, err := from.c.Get(ctx, url)
			if err != nil {
				t.Errorf("to %s: %v", url, err)
				continue
			}
			if want := "cluster-1 " + web[0].Name + "\n"; body != want {
				t.Errorf("to %s: %q, want %q", url, body, want)
			}
		}
	}

	// exec through the apiserver and the node's kubelet endpoint, from
	// member 2's pod to member 1's pod IP.
	out, stderr, err := m2.Exec(ctx, ns, c2pods[0].Name, "echo", "get", "http://"+hostPort(web[1].Status.PodIPs[0].IP, "8080")+"/")
	if err != nil {
		t.Fatalf("exec: %v (stderr %q)", err, stderr)
	}
	if want := "cluster-1 " + web[1].Name + "\n"; out != want {
		t.Errorf("exec get: %q, want %q", out, want)
	}

	// logs through the apiserver and the node's kubelet endpoint.
	cs, err := kubernetes.NewForConfig(m1.Config)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := cs.CoreV1().Pods(ns).GetLogs(web[0].Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	if want := "echo: cluster-1 " + web[0].Name + " answering"; !strings.Contains(string(logs), want) {
		t.Errorf("logs of %s: %q, want a line with %q", web[0].Name, logs, want)
	}

	// Stop leaves nothing of the lab on the host.
	if err := l.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"/var/run/netns/mcslab-" + l.ID + "-*", "/etc/netns/mcslab-" + l.ID + "-*", "/run/mcs-gitops-lab/" + l.ID} {
		if left, _ := filepath.Glob(pattern); len(left) > 0 {
			t.Errorf("left after Stop: %v", left)
		}
	}
}

func hostPort(ip, port string) string {
	if strings.Contains(ip, ":") {
		return "[" + ip + "]:" + port
	}
	return ip + ":" + port
}
