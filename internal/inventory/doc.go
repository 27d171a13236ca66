// SPDX-License-Identifier: Apache-2.0

// Package inventory reads the cluster inventory: the ClusterProfiles
// (multicluster.x-k8s.io/v1alpha1, SIG Multicluster's KEP-4322, as of
// sigs.k8s.io/cluster-inventory-api v0.1.2) of one namespace of the
// management cluster. It owns the API's types (the fields mcs-gitops
// reads, written down again since the module is not a dependency), which
// profiles make which members (Membership), and the access provider file
// of KEP-5339 with the client config it builds for a profile: an exec
// credential plugin, run by client-go, given the profile's cluster.
//
// It does not read members, render or commit: the command layer lists the
// profiles, records the membership in status/inventory.yaml (layout) and
// hands the configs to clusters.Connect.
package inventory
