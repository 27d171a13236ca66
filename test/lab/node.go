// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// node is one member's only node, and the agent that plays its scheduler
// and kubelet: it binds every unscheduled Pod to itself and runs the Pods
// bound to it.
type node struct {
	name    string // the Node object's name
	member  string
	index   int // 1-based member index: picks the node's and pods' addresses
	netns   string
	v4, v6  bool
	v6First bool // IPv6-only members list IPv6 first (the only one)
	log     *slog.Logger

	cs       kubernetes.Interface
	execPort int
	podNetns func(slot int) string
	// setupNetwork is setupPodNetwork; a test makes it fail.
	setupNetwork func(n *node, podns, hostIf string, addrs []netip.Addr, resolvConf []byte) error
	// dnsIPs are the kube-dns Service's cluster IPs, for pods' resolv.conf.
	dnsIPs []netip.Addr

	queue  workqueue.TypedRateLimitingInterface[string]
	lister corelisters.PodLister

	mu    sync.Mutex
	pods  map[string]*podRuntime // by namespace/name
	slots [256]bool              // pod address k is taken; 0, 1 and 255 never used
}

// nodeIPs is the node's addresses on the fabric, in the member's family
// order.
func (n *node) nodeIPs() []netip.Addr {
	var out []netip.Addr
	if n.v4 {
		out = append(out, nodeAddrV4(n.index))
	}
	if n.v6 {
		out = append(out, nodeAddrV6(n.index))
	}
	if n.v6First && len(out) == 2 {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

func (n *node) podCIDRs() []string {
	var out []string
	if n.v4 {
		out = append(out, podCIDRV4(n.index).String())
	}
	if n.v6 {
		out = append(out, podCIDRV6(n.index).String())
	}
	if n.v6First && len(out) == 2 {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// register creates the Node object with its pod CIDRs, its addresses and a
// Ready condition. Its Hostname address is the host's loopback, where the
// node's kubelet endpoint (exec, logs) listens: the apiserver, running in
// the host's namespace, prefers Hostname when it calls a kubelet.
func (n *node) register(ctx context.Context) error {
	cidrs := n.podCIDRs()
	obj := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{
			corev1.LabelHostname: n.name, corev1.LabelOSStable: "linux", "mcs-gitops.test/lab": "node",
		}},
		Spec: corev1.NodeSpec{PodCIDR: cidrs[0], PodCIDRs: cidrs},
	}
	created, err := n.cs.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("cluster %q: register node %s: %w", n.member, n.name, err)
	}
	now := metav1.Now()
	for _, a := range n.nodeIPs() {
		created.Status.Addresses = append(created.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a.String()})
	}
	created.Status.Addresses = append(created.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: "127.0.0.1"})
	created.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(n.execPort)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("250"),
	}
	created.Status.Capacity, created.Status.Allocatable = capacity, capacity
	created.Status.NodeInfo = corev1.NodeSystemInfo{
		KubeletVersion: "v1.36.3-lab", OperatingSystem: "linux", Architecture: "amd64", ContainerRuntimeVersion: "lab://host-processes",
	}
	created.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "lab node agent is running", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastHeartbeatTime: now, LastTransitionTime: now},
	}
	if _, err := n.cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("cluster %q: node %s status: %w", n.member, n.name, err)
	}
	return nil
}

// run watches Pods until ctx ends: unscheduled ones and its own.
func (n *node) run(ctx context.Context, workers int) error {
	n.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 2*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: n.name})
	f := informers.NewSharedInformerFactory(n.cs, 0)
	inf := f.Core().V1().Pods()
	n.lister = inf.Lister()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			n.queue.Add(key)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue,
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return fmt.Errorf("cluster %q: node %s: pod cache did not sync", n.member, n.name)
	}
	for range workers {
		go func() {
			for n.work(ctx) {
			}
		}()
	}
	go func() {
		<-ctx.Done()
		n.queue.ShutDown()
	}()
	return nil
}

func (n *node) work(ctx context.Context) bool {
	key, quit := n.queue.Get()
	if quit {
		return false
	}
	defer n.queue.Done(key)
	if err := n.reconcile(ctx, key); err != nil {
		if ctx.Err() == nil {
			// A conflict only means the status was written from a stale
			// copy; the retry reads the new one.
			if !apierrors.IsConflict(err) && !errors.Is(err, errSandboxRetry) {
				n.log.Warn("pod sync failed; retrying", "pod", key, "err", err)
			}
			n.queue.AddRateLimited(key)
		}
		return true
	}
	n.queue.Forget(key)
	return true
}

// reconcile makes one Pod's processes and status match its object.
func (n *node) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := n.lister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		n.stopPod(key, 0)
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case pod.Spec.NodeName == "":
		return n.bind(ctx, pod)
	case pod.Spec.NodeName != n.name:
		return nil
	case pod.DeletionTimestamp != nil:
		grace := 5 * time.Second
		if g := pod.DeletionGracePeriodSeconds; g != nil && time.Duration(*g)*time.Second < grace {
			grace = time.Duration(*g) * time.Second
		}
		n.stopPod(key, grace)
		err := n.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(pod.UID)),
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	rt := n.runtimeFor(key, pod)
	if rt == nil {
		return nil // finished and not restarted
	}
	if err := n.writeStatus(ctx, pod, rt); err != nil {
		return err
	}
	if rt.sandboxFailed {
		// Forget the runtime so that the retry starts the pod afresh; the
		// status written above says why it is still Pending meanwhile.
		n.mu.Lock()
		if n.pods[key] == rt {
			delete(n.pods, key)
		}
		n.mu.Unlock()
		n.log.Warn("pod network setup failed; retrying", "pod", key, "err", rt.failed)
		return errSandboxRetry
	}
	return nil
}

// errSandboxRetry requeues a pod whose network could not be set up, with
// the queue's backoff.
var errSandboxRetry = errors.New("pod network setup failed")

func (n *node) bind(ctx context.Context, pod *corev1.Pod) error {
	err := n.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: n.name},
	}, metav1.CreateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // bound meanwhile, or gone
	}
	if err != nil {
		return fmt.Errorf("bind %s/%s to %s: %w", pod.Namespace, pod.Name, n.name, err)
	}
	return nil
}

// runtimeFor returns the Pod's running state, starting it the first time.
// A Pod recreated under the same name (a new UID) starts afresh.
func (n *node) runtimeFor(key string, pod *corev1.Pod) *podRuntime {
	n.mu.Lock()
	rt := n.pods[key]
	n.mu.Unlock()
	if rt != nil && rt.uid == pod.UID {
		return rt
	}
	if rt != nil {
		n.stopPod(key, time.Second)
	}
	rt = n.startPod(key, pod)
	n.mu.Lock()
	n.pods[key] = rt
	n.mu.Unlock()
	return rt
}

// allocSlot takes a free pod address index.
func (n *node) allocSlot() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k := 2; k < 255; k++ {
		if !n.slots[k] {
			n.slots[k] = true
			return k, nil
		}
	}
	return 0, errors.New("no free pod address on " + n.name)
}

func (n *node) freeSlot(k int) {
	n.mu.Lock()
	n.slots[k] = false
	n.mu.Unlock()
}

// stopPod stops a Pod's processes and removes its network, if it runs here.
func (n *node) stopPod(key string, grace time.Duration) {
	n.mu.Lock()
	rt := n.pods[key]
	delete(n.pods, key)
	n.mu.Unlock()
	if rt == nil {
		return
	}
	rt.stop(grace)
	if rt.slot > 0 {
		if err := teardownPodNetwork(n, rt.netns, n.hostIf(rt.slot)); err != nil {
			n.log.Warn("pod network cleanup failed", "pod", key, "err", err)
		}
		n.freeSlot(rt.slot)
	}
}

// stopAll stops every pod on the node (the lab is stopping).
func (n *node) stopAll() {
	n.mu.Lock()
	keys := make([]string, 0, len(n.pods))
	for k := range n.pods {
		keys = append(keys, k)
	}
	n.mu.Unlock()
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() { n.stopPod(k, time.Second) })
	}
	wg.Wait()
}

func (n *node) hostIf(slot int) string { return "p" + strconv.Itoa(slot) }
