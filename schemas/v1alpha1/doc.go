// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 holds mcs-gitops's own configuration API, group
// mcs-gitops.io/v1alpha1: the ClusterSet that lists the member clusters and
// how to render for them.
//
// It owns the Go types, their defaults, strict loading with errors that point
// at the file, line and field, and validation. It must not reach any cluster,
// and it never holds a credential: a member names where its kubeconfig lives,
// the config file itself is committed to Git.
package v1alpha1

//go:generate go run ./gen ../..
