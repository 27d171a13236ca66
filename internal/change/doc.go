// SPDX-License-Identifier: Apache-2.0

// Package change describes what a change to the rendered ClusterSet does to
// who can reach what: one typed model of the difference between two render
// reports, per service and per member. The commit message, SUMMARY.md's
// change views, `--summary`, `diff` and the review pull request are views
// of it, so they cannot disagree.
//
// Every change is an old and a new value, so a Set has an inverse (the
// change back) and applying a Set to the reachability of its old side gives
// that of its new side; the property tests hold both. The package is pure:
// it reads reports, never Git, the clock or a cluster, and it formats
// nothing for a particular view.
package change
