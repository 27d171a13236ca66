// SPDX-License-Identifier: Apache-2.0

// Package reconcile is the loop of mcs-gitops: one cycle (Sync) collects
// every member, renders, commits and pushes the change, then applies the
// commit to every member; Run repeats cycles on watch events, paced so a
// burst of endpoint churn becomes one commit.
//
// It composes clusters, render, gitsync and apply and owns only the order
// of the steps, the pacing, leader election, the metrics, and review
// mode's hooks in a cycle (review.go: when to poll the forge, render
// through review.Split, push proposal branches and call the forge with
// what internal/review/propose says). It must not re-implement what those
// packages do (no YAML, no Git plumbing, no Kubernetes writes of its own,
// no request text or review record of its own).
package reconcile
