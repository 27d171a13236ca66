// SPDX-License-Identifier: Apache-2.0

// Package doctor checks, member by member, what mcs-gitops needs from a
// ClusterSet, with the identities the loop itself uses: the member is
// reachable and accepts the credential (and for how long), the CRDs are
// served at the versions the renderer writes, the identity may do every
// verb a cycle does and not much more, the member's CoreDNS serves the
// ClusterSet zone, and optionally that an imported name resolves. Each
// finding says how to fix it.
//
// It only reads: every check is a discovery call, a self access review or
// a get, so running it against a production fleet is safe.
package doctor
