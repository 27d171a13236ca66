// SPDX-License-Identifier: Apache-2.0

// Package lab runs a data plane on one machine without containers, so tests
// and the demo can send real packets between member clusters.
//
// Each member is the control plane test/envtest starts (kube-apiserver and
// etcd) plus a real kube-controller-manager (Deployments, ReplicaSets,
// EndpointSlices from real Pods, namespace deletion, garbage collection) and a
// real kube-proxy in nftables mode, both built by `make testbin`. One node per
// member is played by the package's own node agent (node.go, pod.go): it
// registers the Node, binds Pods to it, runs each container's program as a
// process in the Pod's own network namespace, probes readiness for real and
// serves the kubelet's exec endpoint. CoreDNS serves cluster.local and
// clusterset.local on each node behind a kube-dns Service.
//
// The network (network.go) is flat, as flat mode assumes: every node's
// namespace hangs off one bridge in the lab's fabric namespace, with routes
// between the members' pod CIDRs. Nothing is created in the host's own
// network namespace: traffic stays inside the lab's namespaces, and the
// apiservers (which listen on the host's loopback) are reached from a node
// through a forwarder listening on the node's loopback.
//
// The lab needs root, `ip` with network namespaces and `nft`. Start skips a
// test that cannot have them and says why; everything the lab creates is
// removed by Stop, and a crashed run's leftovers by the next Start
// (cleanup.go). Containers run host programs, chosen by image in one place
// (programs.go); the package itself carries the echo server pods run.
package lab
