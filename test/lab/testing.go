// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Start launches a lab for a test and stops it at cleanup. Where the lab
// cannot run (Requirements), the test is skipped with the reason outside
// CI and fails in CI, where a skip would let a broken machine pass.
func Start(t testing.TB, opts Options) *Lab {
	t.Helper()
	if err := Requirements(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the data-plane lab cannot run here: %v", err)
		}
		t.Skipf("skipping: the data-plane lab cannot run here: %v", err)
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	l, err := Launch(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("lab output:\n%s", l.Output())
		}
		if err := l.Stop(); err != nil {
			t.Errorf("stopping the lab: %v", err)
		}
	})
	return l
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// EchoDeployment is a Deployment of replicas echo pods in the member,
// labelled app=name, answering "<member> <pod>" on the given ports, ready
// while GET /readyz on the first HTTP port answers (probed every second).
func (m *Member) EchoDeployment(namespace, name string, replicas int32, httpPorts, tcpPorts []int) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	c := corev1.Container{Name: "echo", Image: EchoImage, Args: EchoArgs(m.Name, httpPorts, tcpPorts)}
	for _, p := range httpPorts {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "http-" + strconv.Itoa(p), ContainerPort: int32(p)})
	}
	for _, p := range tcpPorts {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "tcp-" + strconv.Itoa(p), ContainerPort: int32(p)})
	}
	if len(httpPorts) > 0 {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt(httpPorts[0])}},
			PeriodSeconds: 1, FailureThreshold: 1,
		}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, TerminationGracePeriodSeconds: ptr.To[int64](1)},
			},
		},
	}
}

// WaitPods waits until n pods matching the labels in namespace are Ready
// and returns them.
func (m *Member) WaitPods(ctx context.Context, namespace string, labels map[string]string, n int) ([]corev1.Pod, error) {
	var ready []corev1.Pod
	err := waitFor(ctx, 2*time.Minute, func(ctx context.Context) error {
		var list corev1.PodList
		if err := m.Cluster.Client.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
			return err
		}
		ready = ready[:0]
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && podReady(&p) {
				ready = append(ready, p)
			}
		}
		if len(ready) != n {
			var why []string
			for _, p := range list.Items {
				if !podReady(&p) {
					why = append(why, fmt.Sprintf("%s: %s", p.Name, podState(&p)))
				}
			}
			return fmt.Errorf("cluster %q: %d of %d pods %v in %s ready (of %d; %s)", m.Name, len(ready), n, labels, namespace,
				len(list.Items), strings.Join(why, "; "))
		}
		return nil
	})
	return ready, err
}

// podState says in a few words where a pod stands, for error messages.
func podState(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	if p.Spec.NodeName == "" {
		s += ", not bound"
	}
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			s += fmt.Sprintf(", %s waiting: %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
		case c.State.Terminated != nil:
			s += fmt.Sprintf(", %s exited %d: %s", c.Name, c.State.Terminated.ExitCode, c.State.Terminated.Message)
		case !c.Ready:
			s += fmt.Sprintf(", %s running, not ready (restarts %d)", c.Name, c.RestartCount)
		}
	}
	return s
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitEndpoints waits until the EndpointSlices of Service namespace/name
// list n ready endpoints in the Service's first IP family. Pods are Ready a
// moment before the endpointslice controller says so, and a sync reads the
// slices, not the pods.
func (m *Member) WaitEndpoints(ctx context.Context, namespace, name string, n int) error {
	return waitFor(ctx, 2*time.Minute, func(ctx context.Context) error {
		var svc corev1.Service
		if err := m.Cluster.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &svc); err != nil {
			return err
		}
		family := discoveryv1.AddressTypeIPv4
		if len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] == corev1.IPv6Protocol {
			family = discoveryv1.AddressTypeIPv6
		}
		var list discoveryv1.EndpointSliceList
		if err := m.Cluster.Client.List(ctx, &list, client.InNamespace(namespace),
			client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
			return err
		}
		ready := 0
		for _, s := range list.Items {
			if s.AddressType != family {
				continue
			}
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ready++
				}
			}
		}
		if ready != n {
			return fmt.Errorf("cluster %q: Service %s/%s has %d ready %s endpoints, want %d", m.Name, namespace, name, ready, family, n)
		}
		return nil
	})
}
