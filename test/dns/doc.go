// SPDX-License-Identifier: Apache-2.0

// Package dns runs a real CoreDNS against a test apiserver so tests can check
// what the ServiceImports and EndpointSlices mcs-gitops applies resolve to:
// <svc>.<ns>.svc.clusterset.local, named-port SRV records and the per-endpoint
// names of headless imports, served by the kubernetes plugin's `multicluster`
// option exactly as in a member cluster.
//
// It owns finding the coredns binary that `make testbin` builds
// (test/testbin/build.sh), writing a Corefile and a kubeconfig into the test's
// temporary directory, starting CoreDNS on free localhost ports, waiting until
// it is ready and stopping it at cleanup, and small DNS query helpers
// (github.com/miekg/dns) that poll until the answer is as expected.
//
// It must not: fake DNS answers, log or return a credential (the kubeconfig is
// written with mode 0600 and only its path appears in messages), modify
// cluster objects (tests create them), or skip silently: a missing binary skips
// only outside CI, and fails in CI (environment variable CI set).
package dns
