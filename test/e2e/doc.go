// SPDX-License-Identifier: Apache-2.0

// Package e2e holds the multi-cluster tests that run against real
// kube-apiservers (started by test/envtest), among them the check that every
// scenario in fixtures/ renders to objects a real apiserver accepts.
package e2e
