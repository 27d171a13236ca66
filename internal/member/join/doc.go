// SPDX-License-Identifier: Apache-2.0

// Package join connects a cluster to a ClusterSet and disconnects it: with
// the member's administrator credentials it installs what the loop needs
// there (the MCS, GlobalTrafficPolicy and, for gateway mode, Gateway API
// CRDs; the member role of deploy/member-rbac and its admission policy; a
// ServiceAccount and a short-lived token for it), and writes a kubeconfig
// holding only that least-privilege identity into the management cluster's
// <member>-kubeconfig Secret. Optionally it makes the member's CoreDNS serve
// clusterset.local.
//
// It never writes the administrator's credentials anywhere, never deletes a
// CRD or a user's object (leave removes only what join created), and in a
// dry run changes nothing: every apply is a server-side dry run.
package join
