// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// Lab is a running data plane: one member cluster per stack, each with a
// node, wired into one flat network.
type Lab struct {
	// ID names everything the lab created on the host (cleanup.go).
	ID      string
	Members []*Member
	// Took is how long Launch took, control planes included.
	Took time.Duration

	dir    string
	fabric string
	log    *slog.Logger
	fleet  *envtest.Fleet
	cancel context.CancelFunc

	mu    sync.Mutex
	procs []*proc
	stops []func()
}

// Member is one member cluster of the lab.
type Member struct {
	*envtest.Cluster
	// Index is 1-based; it picks the member's pod CIDRs (10.244.<i>.0/24,
	// fd00:10:244:<i>::/64) and node addresses.
	Index int
	Stack envtest.Stack
	// NodeName is the member's only Node.
	NodeName string
	// DNSIPs are the member's kube-dns Service cluster IPs.
	DNSIPs []netip.Addr
	// Kubeconfig is a kubeconfig file for the member's apiserver.
	Kubeconfig string

	node *node
	lab  *Lab
}

// Options configures Launch.
type Options struct {
	// Stacks has one entry per member; empty means three dual-stack members.
	Stacks []envtest.Stack
	// Gateways names the members that run a Gateway API implementation
	// (Traefik) behind the Gateway GatewayNamespace/GatewayName, for
	// gateway mode ("cluster-1").
	Gateways []string
	// Log receives the lab's events; nil discards them.
	Log *slog.Logger
}

// Launch starts a lab. Stop it with Stop; a crash leaves what the next
// Launch cleans. Check Requirements first to tell "cannot run here" from a
// failure.
func Launch(opts Options) (_ *Lab, err error) {
	begin := time.Now()
	if err := Requirements(); err != nil {
		return nil, err
	}
	stacks := opts.Stacks
	if len(stacks) == 0 {
		stacks = []envtest.Stack{envtest.DualStack, envtest.DualStack, envtest.DualStack}
	}
	if len(stacks) > 200 {
		return nil, fmt.Errorf("lab: %d members; the addressing plan has room for 200", len(stacks))
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := CleanLeftovers(); err != nil {
		log.Warn("leftovers of an earlier lab not fully removed", "err", err)
	}
	id, err := newID()
	if err != nil {
		return nil, err
	}
	l := &Lab{ID: id, fabric: netnsPrefix + id + "-fabric", log: log.With("lab", id)}
	defer func() {
		if err != nil {
			err = errors.Join(err, l.Stop())
		}
	}()
	l.dir, err = os.MkdirTemp("", "mcs-gitops-lab-"+id+"-")
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	l.fleet, err = envtest.LaunchStacks(stacks...)
	if err != nil {
		return nil, err
	}
	if err := setupFabric(l.fabric); err != nil {
		return nil, err
	}
	cert, err := selfSignedCert()
	if err != nil {
		return nil, fmt.Errorf("lab: kubelet certificate: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for i, c := range l.fleet.Clusters {
		m, err := l.addMember(c, i+1, stacks[i])
		if err != nil {
			return nil, err
		}
		l.Members = append(l.Members, m)
	}
	for _, g := range opts.Gateways {
		if l.Member(g) == nil {
			return nil, fmt.Errorf("lab: Options.Gateways names %q, not a member (cluster-1 … cluster-%d)", g, len(l.Members))
		}
	}
	nodes := make([]*node, len(l.Members))
	for i, m := range l.Members {
		nodes[i] = m.node
	}
	if err := routeNodes(nodes); err != nil {
		return nil, err
	}
	errs := make([]error, len(l.Members))
	var wg sync.WaitGroup
	for i, m := range l.Members {
		wg.Go(func() {
			errs[i] = l.startMember(ctx, m, cert)
			if errs[i] == nil && slices.Contains(opts.Gateways, m.Name) {
				errs[i] = l.startGateway(ctx, m)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	l.Took = time.Since(begin)
	l.log.Info("lab ready", "members", len(l.Members), "took", l.Took.Round(time.Millisecond).String())
	return l, nil
}

func (l *Lab) addMember(c *envtest.Cluster, index int, stack envtest.Stack) (*Member, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	m := &Member{Cluster: c, Index: index, Stack: stack, NodeName: c.Name + "-node", lab: l,
		Kubeconfig: filepath.Join(l.dir, c.Name+".kubeconfig")}
	if err := c.WriteKubeconfig(m.Kubeconfig); err != nil {
		return nil, err
	}
	m.node = &node{
		name: m.NodeName, member: c.Name, index: index,
		netns: fmt.Sprintf("%s%s-n%d", netnsPrefix, l.ID, index),
		v4:    stack != envtest.IPv6Only, v6: stack != envtest.IPv4Only, v6First: stack == envtest.IPv6Only,
		log: l.log.With("cluster", c.Name), cs: cs, pods: map[string]*podRuntime{},
		setupNetwork: setupPodNetwork,
	}
	m.node.podNetns = func(slot int) string { return m.node.netns + "-p" + strconv.Itoa(slot) }
	if err := setupNode(l.fabric, m.node); err != nil {
		return nil, err
	}
	return m, nil
}

// track remembers a process to stop with the lab.
func (l *Lab) track(p *proc) {
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()
}

func (l *Lab) onStop(f func()) {
	l.mu.Lock()
	l.stops = append(l.stops, f)
	l.mu.Unlock()
}

// Stop stops every process, removes every namespace and stops the
// control planes. Safe to call more than once.
func (l *Lab) Stop() error {
	if l.cancel != nil {
		l.cancel()
	}
	var errs []error
	for _, m := range l.Members {
		m.node.stopAll()
	}
	l.mu.Lock()
	procs, stops := l.procs, l.stops
	l.procs, l.stops = nil, nil
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.stop(5 * time.Second) })
	}
	wg.Wait()
	for _, f := range stops {
		f()
	}
	if l.ID != "" {
		names, err := listNetns(netnsPrefix + l.ID + "-")
		if err != nil {
			errs = append(errs, err)
		}
		for _, n := range names {
			if err := deleteNetns(n); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if l.fleet != nil {
		errs = append(errs, l.fleet.Stop())
		l.fleet = nil
	}
	if l.dir != "" {
		errs = append(errs, os.RemoveAll(l.dir))
	}
	if l.ID != "" {
		errs = append(errs, os.RemoveAll(filepath.Join(recordsDir, l.ID)))
	}
	return errors.Join(errs...)
}

// Member returns the member named name ("cluster-2"), or nil.
func (l *Lab) Member(name string) *Member {
	for _, m := range l.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Output returns the kept output of the lab's processes (control-plane
// components, CoreDNS), for a failure message.
func (l *Lab) Output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s string
	for _, p := range l.procs {
		s += fmt.Sprintf("--- %s ---\n%s\n", p.name, p.out.String())
	}
	return s
}

// StopAPIServer takes the member's control plane down the way a lost
// member looks from outside: the apiserver stops answering while its node,
// pods, kube-proxy rules and CoreDNS's last state stay. envtest stops
// gracefully and kills the apiserver when that takes too long (it does
// here: the lab's components hold watches); both end with the apiserver
// gone, which is all this wants.
func (m *Member) StopAPIServer() error {
	err := m.Cluster.StopAPIServer()
	if err != nil && strings.Contains(err.Error(), "timeout waiting for process") {
		return nil
	}
	return err
}
