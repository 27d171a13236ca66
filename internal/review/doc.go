// SPDX-License-Identifier: Apache-2.0

// Package review splits what a cycle would change into churn, which goes
// straight to the branch, and structural changes, which wait in proposals
// until a human merges them (review mode, docs/review-mode.md).
//
// The approved world is what the branch's last commit holds: its inputs/
// snapshots and its report's importers. A structural change is a
// difference in who can reach what between that world and the live one:
// a member exporting a service or changing what it exports (type, ports,
// the export itself), a member withdrawing an export, a member importing a
// service, a traffic policy created, changed or deleted, or a new member.
// Endpoints, readiness and counts are churn: they never make a difference
// here, so failover and scaling are never held.
//
// Split builds the world the branch gets (live churn on the approved
// structure, with every structural change reverted to its approved state),
// groups the changes into independent proposals with stable names, and
// builds each proposal's world (the branch's world plus that change). It
// renders through a function it is given and does no I/O: it does not
// talk to the forge, write Git or read clusters.
package review
