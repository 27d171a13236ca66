// SPDX-License-Identifier: Apache-2.0

// Package snapshot owns the collected state of one member cluster: the
// ClusterProperty cluster ID, Namespaces, ServiceExports, the Services they
// export and those Services' EndpointSlices, its GlobalTrafficPolicies
// (spec only) and the addresses its gateway host resolved to (recorded as
// the gateway-addresses.mcs-gitops.io ClusterProperty), and its file format
// inputs/<member>.yaml (multi-document YAML exactly as kubectl prints it, a
// List accepted too).
//
// Parsing and formatting are pure; only LoadDir and WriteFile touch the
// filesystem. It does not talk to clusters and does not interpret the
// KEP-1645 rules; that is the renderer's job.
package snapshot
