// SPDX-License-Identifier: Apache-2.0

// Package propose is what review mode says and remembers about its
// proposals: the Reviewer (the forge, the kinds that wait for a person,
// what the forge last said of each request, the approved world per
// commit), the record a commit keeps in status/review.yaml (State,
// ProposalState), the PendingReview conditions a held export carries
// (MarkPending), and a request's title, body, labels and commit message,
// cut to what every forge keeps as sent.
//
// It decides nothing about what is held (the split in package review
// does) and does no I/O: it neither talks to the forge nor writes Git.
// The loop (internal/reconcile) calls the forge and Git with what it
// gives.
package propose
