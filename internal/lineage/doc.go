// SPDX-License-Identifier: Apache-2.0

// Package lineage keeps, outside Git, what the loop last pushed to its
// branch: the commit, and the members whose snapshots that commit holds.
// Git is the loop's memory of the members it cannot read, and Git can be
// rewritten (a force-push, a remote recreated empty); a process that
// remembers nothing (a restart, a CronJob's fresh clone) would take the
// rewritten branch as the truth. The record lives in a ConfigMap in the
// management cluster, beside the leader Lease, and a person accepts a
// rewritten branch by writing it (Accept), which is recorded on it.
//
// It owns the record's format and its store; it must not decide what a
// record means for a cycle (internal/reconcile does) nor do Git.
package lineage
