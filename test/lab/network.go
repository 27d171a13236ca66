// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"fmt"
	"net/netip"
	"strings"
)

// The lab's addressing plan. Every range lives only inside the lab's own
// namespaces, so two labs running at once (parallel test packages) may use
// the same addresses without meeting.
//
//	node i on the fabric:  172.30.0.(10+i)/24, fd00:172:30::(10+i)/64
//	member i's pods:       10.244.i.0/24,      fd00:10:244:i::/64
//	pod gateway:           169.254.1.1, fe80::1 (on each pod's veth, node side)
const (
	fabricBridge = "br0"
	podGatewayV4 = "169.254.1.1"
	podGatewayV6 = "fe80::1"
)

func nodeAddrV4(i int) netip.Addr { return netip.MustParseAddr(fmt.Sprintf("172.30.0.%d", 10+i)) }
func nodeAddrV6(i int) netip.Addr { return netip.MustParseAddr(fmt.Sprintf("fd00:172:30::%d", 10+i)) }
func podCIDRV4(i int) netip.Prefix {
	return netip.MustParsePrefix(fmt.Sprintf("10.244.%d.0/24", i))
}
func podCIDRV6(i int) netip.Prefix {
	return netip.MustParsePrefix(fmt.Sprintf("fd00:10:244:%d::/64", i))
}

// podAddrs returns the k-th address of each pod CIDR of member i, in the
// member's family order.
func (n *node) podAddrs(k int) []netip.Addr {
	var out []netip.Addr
	if n.v4 {
		out = append(out, netip.MustParseAddr(fmt.Sprintf("10.244.%d.%d", n.index, k)))
	}
	if n.v6 {
		out = append(out, netip.MustParseAddr(fmt.Sprintf("fd00:10:244:%d::%d", n.index, k)))
	}
	if n.v6First && len(out) == 2 {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// setupFabric creates the fabric namespace and its bridge.
func setupFabric(fabric string) error {
	steps := [][]string{
		{"netns", "add", fabric},
		{"-n", fabric, "link", "set", "lo", "up"},
		{"-n", fabric, "link", "add", fabricBridge, "type", "bridge"},
		{"-n", fabric, "link", "set", fabricBridge, "up"},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return fmt.Errorf("lab fabric: %w", err)
		}
	}
	return nil
}

// setupNode creates member n's node namespace, wired to the fabric bridge.
// Routes to the other members come later (routeNodes), once all exist.
func setupNode(fabric string, n *node) error {
	peer := fmt.Sprintf("n%d", n.index)
	steps := [][]string{
		{"netns", "add", n.netns},
		{"-n", n.netns, "link", "set", "lo", "up"},
		{"-n", n.netns, "link", "add", "eth0", "type", "veth", "peer", "name", peer, "netns", fabric},
		{"-n", fabric, "link", "set", peer, "master", fabricBridge},
		{"-n", fabric, "link", "set", peer, "up"},
		// Every node gets both families on the fabric, whatever its
		// member's stack: the fabric is the lab's, not the member's.
		{"-n", n.netns, "addr", "add", nodeAddrV4(n.index).String() + "/24", "dev", "eth0"},
		{"-n", n.netns, "addr", "add", nodeAddrV6(n.index).String() + "/64", "dev", "eth0", "nodad"},
		{"-n", n.netns, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return fmt.Errorf("lab node %s: %w", n.name, err)
		}
	}
	if err := sysctlIn(n.netns, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"); err != nil {
		return fmt.Errorf("lab node %s: %w", n.name, err)
	}
	return nil
}

// routeNodes gives every node a route to every other member's pod CIDRs
// through that member's node: the flat network.
func routeNodes(nodes []*node) error {
	for _, n := range nodes {
		for _, o := range nodes {
			if o == n {
				continue
			}
			if err := ip("-n", n.netns, "route", "add", podCIDRV4(o.index).String(), "via", nodeAddrV4(o.index).String()); err != nil {
				return fmt.Errorf("lab node %s: %w", n.name, err)
			}
			if err := ip("-n", n.netns, "-6", "route", "add", podCIDRV6(o.index).String(), "via", nodeAddrV6(o.index).String()); err != nil {
				return fmt.Errorf("lab node %s: %w", n.name, err)
			}
		}
	}
	return nil
}

// setupPodNetwork creates a pod's namespace with one veth into the node's:
// the pod's addresses are host routes on the node (no bridge, so every
// packet, even to a pod on the same node, is routed through the node's
// kube-proxy rules), and the pod's default routes point at a link-local
// gateway address every pod's veth has on the node's side.
func setupPodNetwork(n *node, podns, hostIf string, addrs []netip.Addr, resolvConf []byte) error {
	// What a teardown that did not finish (a crash, a kill) left in this
	// slot would make `link add` fail.
	if err := deleteLink(n.netns, hostIf); err != nil {
		return fmt.Errorf("pod network %s: %w", podns, err)
	}
	steps := [][]string{
		{"netns", "add", podns},
		{"-n", podns, "link", "set", "lo", "up"},
		{"-n", podns, "link", "add", "eth0", "type", "veth", "peer", "name", hostIf, "netns", n.netns},
		{"-n", podns, "link", "set", "eth0", "up"},
		{"-n", n.netns, "link", "set", hostIf, "up"},
	}
	for _, a := range addrs {
		if a.Is4() {
			steps = append(steps,
				[]string{"-n", podns, "addr", "add", a.String() + "/32", "dev", "eth0"},
				[]string{"-n", podns, "route", "add", podGatewayV4, "dev", "eth0", "scope", "link"},
				[]string{"-n", podns, "route", "add", "default", "via", podGatewayV4, "dev", "eth0"},
				[]string{"-n", n.netns, "addr", "add", podGatewayV4 + "/32", "dev", hostIf},
				[]string{"-n", n.netns, "route", "add", a.String() + "/32", "dev", hostIf},
			)
		} else {
			steps = append(steps,
				[]string{"-n", podns, "addr", "add", a.String() + "/128", "dev", "eth0", "nodad"},
				[]string{"-n", n.netns, "addr", "add", podGatewayV6 + "/64", "dev", hostIf, "nodad"},
				[]string{"-n", podns, "-6", "route", "add", "default", "via", podGatewayV6, "dev", "eth0"},
				[]string{"-n", n.netns, "-6", "route", "add", a.String() + "/128", "dev", hostIf},
			)
		}
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return fmt.Errorf("pod network %s: %w", podns, err)
		}
	}
	return writeResolvConf(podns, resolvConf)
}

// teardownPodNetwork removes a pod's network so that its slot can be used
// again at once. `ip netns delete` only unmounts the namespace: the kernel
// destroys it, and the veth pair inside, a little later (tens of
// milliseconds under load), and a pod set up in the same slot meanwhile
// fails with "File exists" on the node-side name. Deleting the node's end
// first removes the pair synchronously; the namespace can then go lazily,
// as nothing in it can collide with its successor (the next one is a new
// mount under the same name, with a new veth).
func teardownPodNetwork(n *node, podns, hostIf string) error {
	killNetnsProcs(podns)
	err := deleteLink(n.netns, hostIf)
	if nerr := deleteNetns(podns); nerr != nil && err == nil {
		err = nerr
	}
	return err
}

// deleteLink deletes a link in a namespace; a link that is not there is
// fine.
func deleteLink(netns, name string) error {
	out, err := run("ip", "-n", netns, "link", "delete", name)
	if err != nil && (strings.Contains(string(out), "Cannot find device") || strings.Contains(string(out), "does not exist")) {
		return nil
	}
	return err
}
