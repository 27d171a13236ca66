// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// podRuntime is what the node agent runs for one Pod.
type podRuntime struct {
	uid    types.UID
	key    string
	netns  string
	slot   int
	addrs  []netip.Addr
	start  metav1.Time
	cancel context.CancelFunc
	// failed says why the pod could not start; the pod stays Pending with
	// it. An unknown image or unsupported spec is final, as it is for a
	// kubelet; a network that could not be set up (sandboxFailed) is
	// retried with a backoff, as a kubelet retries a pod sandbox.
	failed        string
	sandboxFailed bool
	containers    []*container
}

// container is one container's process, restarted per the pod's policy,
// and its readiness.
type container struct {
	spec corev1.Container
	prog program
	argv []string
	env  []string

	mu        sync.Mutex
	p         *proc
	restarts  int32
	startedAt metav1.Time
	probeOK   bool
	lastExit  *corev1.ContainerStateTerminated
}

// startPod sets up the pod's network and starts its containers. Errors
// leave a runtime whose `failed` says why, so the status shows it.
func (n *node) startPod(key string, pod *corev1.Pod) *podRuntime {
	ctx, cancel := context.WithCancel(context.Background())
	rt := &podRuntime{uid: pod.UID, key: key, start: metav1.Now(), cancel: cancel}
	var containers []*container
	for _, c := range pod.Spec.Containers {
		ct, err := n.prepareContainer(pod, c)
		if err != nil {
			rt.failed = fmt.Sprintf("container %s: %v", c.Name, err)
			return rt
		}
		containers = append(containers, ct)
	}
	if pod.Spec.HostNetwork {
		rt.netns = n.netns
		rt.addrs = n.nodeIPs()
	} else {
		slot, err := n.allocSlot()
		if err != nil {
			rt.failed, rt.sandboxFailed = err.Error(), true
			return rt
		}
		netns, hostIf := n.podNetns(slot), n.hostIf(slot)
		_ = teardownPodNetwork(n, netns, hostIf) // what a crash left in this slot
		n.mu.Lock()
		setup := n.setupNetwork
		n.mu.Unlock()
		if err := setup(n, netns, hostIf, n.podAddrs(slot), n.resolvConf(pod)); err != nil {
			rt.failed, rt.sandboxFailed = err.Error(), true
			_ = teardownPodNetwork(n, netns, hostIf)
			n.freeSlot(slot)
			return rt
		}
		rt.slot, rt.netns, rt.addrs = slot, netns, n.podAddrs(slot)
	}
	for i := range containers {
		c := containers[i]
		c.env = append(c.env, n.fieldEnv(pod, c.spec, rt)...)
		rt.containers = append(rt.containers, c)
		go n.supervise(ctx, pod, rt, c)
		if c.spec.ReadinessProbe != nil {
			go n.probe(ctx, rt, c)
		}
	}
	return rt
}

func (rt *podRuntime) stop(grace time.Duration) {
	rt.cancel()
	var wg sync.WaitGroup
	for _, c := range rt.containers {
		wg.Go(func() {
			c.mu.Lock()
			p := c.p
			c.mu.Unlock()
			if p != nil {
				p.stop(grace)
			}
		})
	}
	wg.Wait()
}

func (n *node) prepareContainer(pod *corev1.Pod, c corev1.Container) (*container, error) {
	var prog program
	var argv []string
	var err error
	if len(c.Command) > 0 {
		prog, err = commandProgram(c.Command[0])
		argv = append(append(argv, c.Command[1:]...), c.Args...)
	} else {
		prog, err = imageProgram(c.Image)
		argv = append(argv, c.Args...)
		if err == nil && prog.bin == "" {
			// An image without an entrypoint: its args are the command.
			if len(c.Args) == 0 {
				return nil, fmt.Errorf("image %s has no entrypoint and the container no command or args", c.Image)
			}
			prog, err = commandProgram(c.Args[0])
			argv = append([]string(nil), c.Args[1:]...)
		}
	}
	if err != nil {
		return nil, err
	}
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	env := append(append(baseEnv(), prog.env...), "HOSTNAME="+hostname)
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
			continue
		}
		if e.ValueFrom.FieldRef == nil {
			return nil, fmt.Errorf("env %s: only value and fieldRef are supported in the lab", e.Name)
		}
		switch e.ValueFrom.FieldRef.FieldPath {
		case "metadata.name", "metadata.namespace", "spec.nodeName", "status.podIP", "status.podIPs", "status.hostIP":
		default:
			return nil, fmt.Errorf("env %s: fieldRef %s is not supported in the lab", e.Name, e.ValueFrom.FieldRef.FieldPath)
		}
	}
	return &container{spec: c, prog: prog, argv: argv, env: env}, nil
}

// fieldEnv resolves the container's fieldRef variables, once the pod's
// addresses are known.
func (n *node) fieldEnv(pod *corev1.Pod, c corev1.Container, rt *podRuntime) []string {
	var out []string
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			continue
		}
		var v string
		switch e.ValueFrom.FieldRef.FieldPath {
		case "metadata.name":
			v = pod.Name
		case "metadata.namespace":
			v = pod.Namespace
		case "spec.nodeName":
			v = pod.Spec.NodeName
		case "status.podIP":
			if len(rt.addrs) > 0 {
				v = rt.addrs[0].String()
			}
		case "status.podIPs":
			ips := make([]string, len(rt.addrs))
			for i, a := range rt.addrs {
				ips[i] = a.String()
			}
			v = strings.Join(ips, ",")
		case "status.hostIP":
			v = n.nodeIPs()[0].String()
		}
		out = append(out, e.Name+"="+v)
	}
	return out
}

// supervise runs the container's process, restarting it per the pod's
// restartPolicy with a backoff, until ctx ends.
func (n *node) supervise(ctx context.Context, pod *corev1.Pod, rt *podRuntime, c *container) {
	backoff := time.Second
	netns := rt.netns
	for {
		p, err := startProc(rt.key+"/"+c.spec.Name, netns, c.env, c.prog.bin, c.argv...)
		c.mu.Lock()
		if err != nil {
			c.lastExit = &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", Message: err.Error(), FinishedAt: metav1.Now()}
		} else {
			c.p, c.startedAt = p, metav1.Now()
		}
		c.mu.Unlock()
		n.queue.Add(rt.key)
		if err == nil {
			select {
			case <-ctx.Done():
				return
			case <-p.done:
			}
			code := int32(p.cmd.ProcessState.ExitCode())
			c.mu.Lock()
			c.lastExit = &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: exitReason(code), StartedAt: c.startedAt, FinishedAt: metav1.Now(),
				Message: lastLine(p.out.String()),
			}
			c.p, c.probeOK = nil, false
			c.mu.Unlock()
			n.queue.Add(rt.key)
			if pod.Spec.RestartPolicy == corev1.RestartPolicyNever ||
				(pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && code == 0) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
		c.mu.Lock()
		c.restarts++
		c.mu.Unlock()
	}
}

func exitReason(code int32) string {
	if code == 0 {
		return "Completed"
	}
	return "Error"
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// probe runs the container's readiness probe from the node's namespace,
// as a kubelet would, and requeues the pod when the result changes.
func (n *node) probe(ctx context.Context, rt *podRuntime, c *container) {
	pr := c.spec.ReadinessProbe
	period := time.Duration(max(pr.PeriodSeconds, 1)) * time.Second
	timeout := time.Duration(max(pr.TimeoutSeconds, 1)) * time.Second
	success, failure := max(pr.SuccessThreshold, 1), max(pr.FailureThreshold, 1)
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(pr.InitialDelaySeconds) * time.Second):
	}
	var oks, fails int32
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		c.mu.Lock()
		running := c.p != nil
		c.mu.Unlock()
		if running {
			err := n.probeOnce(ctx, rt, c, timeout)
			c.mu.Lock()
			changed := false
			if err == nil {
				oks, fails = oks+1, 0
				if !c.probeOK && oks >= success {
					c.probeOK, changed = true, true
				}
			} else {
				oks, fails = 0, fails+1
				if c.probeOK && fails >= failure {
					c.probeOK, changed = false, true
				}
			}
			c.mu.Unlock()
			if changed {
				n.queue.Add(rt.key)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (n *node) probeOnce(ctx context.Context, rt *podRuntime, c *container, timeout time.Duration) error {
	pr := c.spec.ReadinessProbe
	if len(rt.addrs) == 0 {
		return fmt.Errorf("no pod address")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host := rt.addrs[0].String()
	switch {
	case pr.HTTPGet != nil:
		port, err := resolvePort(pr.HTTPGet.Port, c.spec)
		if err != nil {
			return err
		}
		code, err := getIn(ctx, n.netns, net.JoinHostPort(host, strconv.Itoa(port)), pr.HTTPGet.Path)
		if err != nil {
			return err
		}
		if code < 200 || code >= 400 {
			return fmt.Errorf("HTTP probe: %d %s", code, http.StatusText(code))
		}
		return nil
	case pr.TCPSocket != nil:
		port, err := resolvePort(pr.TCPSocket.Port, c.spec)
		if err != nil {
			return err
		}
		conn, err := dialIn(ctx, n.netns, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return fmt.Errorf("only httpGet and tcpSocket readiness probes are supported in the lab")
}

func resolvePort(p intstr.IntOrString, c corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, p.StrVal)
}

// resolvConf is the pod's /etc/resolv.conf: the member's kube-dns Service
// and the cluster.local search path (dnsPolicy ClusterFirst).
func (n *node) resolvConf(pod *corev1.Pod) []byte {
	var b strings.Builder
	for _, ip := range n.dnsIPs {
		fmt.Fprintf(&b, "nameserver %s\n", ip)
	}
	fmt.Fprintf(&b, "search %s.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n", pod.Namespace)
	return []byte(b.String())
}

func writeResolvConf(netns string, content []byte) error {
	dir := filepath.Join("/etc/netns", netns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("pod network %s: %w", netns, err)
	}
	return os.WriteFile(filepath.Join(dir, "resolv.conf"), content, 0o644)
}

// writeStatus reports the pod's state: Running once its network is up and
// its processes started, Ready when every container runs and passes its
// readiness probe.
func (n *node) writeStatus(ctx context.Context, pod *corev1.Pod, rt *podRuntime) error {
	st := pod.Status.DeepCopy()
	now := metav1.Now()
	st.HostIP = n.nodeIPs()[0].String()
	st.HostIPs = nil
	for _, a := range n.nodeIPs() {
		st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: a.String()})
	}
	st.StartTime = &rt.start
	st.PodIP, st.PodIPs = "", nil
	for _, a := range rt.addrs {
		st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: a.String()})
	}
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}
	allReady := rt.failed == "" && len(rt.containers) > 0
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "lab://" + c.Image}
		var ct *container
		for _, x := range rt.containers {
			if x.spec.Name == c.Name {
				ct = x
			}
		}
		if ct == nil {
			reason := "LabNoProgram"
			if rt.sandboxFailed {
				reason = "LabPodNetworkFailed"
			}
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: rt.failed}
			allReady = false
		} else {
			ct.mu.Lock()
			cs.RestartCount = ct.restarts
			cs.LastTerminationState.Terminated = ct.lastExit
			if ct.p != nil {
				cs.State.Running = &corev1.ContainerStateRunning{StartedAt: ct.startedAt}
				cs.Started = new(true)
				cs.Ready = ct.spec.ReadinessProbe == nil || ct.probeOK
			} else if ct.lastExit != nil {
				cs.State.Terminated = ct.lastExit
				cs.LastTerminationState.Terminated = nil
			} else {
				cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
			}
			ct.mu.Unlock()
			allReady = allReady && cs.Ready
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	st.Phase = corev1.PodRunning
	if rt.failed != "" {
		st.Phase = corev1.PodPending
	}
	ready := corev1.ConditionFalse
	if allReady {
		ready = corev1.ConditionTrue
	}
	setCondition(st, corev1.PodReadyToStartContainers, boolCond(rt.failed == ""), now)
	setCondition(st, corev1.PodInitialized, corev1.ConditionTrue, now)
	setCondition(st, corev1.ContainersReady, ready, now)
	setCondition(st, corev1.PodReady, ready, now)
	setCondition(st, corev1.PodScheduled, corev1.ConditionTrue, now)
	if reflect.DeepEqual(st, &pod.Status) {
		return nil
	}
	upd := pod.DeepCopy()
	upd.Status = *st
	_, err := n.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("pod %s status: %w", rt.key, err)
	}
	return nil
}

func boolCond(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// setCondition sets a condition, keeping its transition time while its
// status stays the same.
func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, s corev1.ConditionStatus, now metav1.Time) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			if st.Conditions[i].Status != s {
				st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = s, now
			}
			return
		}
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now})
}
