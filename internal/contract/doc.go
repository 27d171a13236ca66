// SPDX-License-Identifier: Apache-2.0

// Package contract says which objects a member directory of the rendered
// repository may hold: the shapes the renderer emits, and nothing else.
//
// The applier checks every object of a commit against it before anything
// is sent to a member, so a commit that was not rendered (a pull request
// that adds a file under clusters/<member>/) cannot attach an EndpointSlice
// to a user's Service, give a Service externalIPs or a node port, attach a
// route to another Gateway, or label a Namespace privileged. Tests render
// every fixture and prove the contract accepts all of it.
//
// It is pure (no I/O) and reads objects as unstructured maps, the form the
// kustomize build hands the applier. It does not decide what to render,
// and it cannot tell a rendered object from a hand-written one of the same
// shape: that is what render --check in CI is for.
package contract
