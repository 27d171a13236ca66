// SPDX-License-Identifier: Apache-2.0

// Package rollout plans staged rollouts (spec.rollout): which kinds of a
// service's change roll out in waves, and which members make each wave.
//
// It owns the rules, not the clock or Git: it must not read members,
// commit, wait for a soak time or decide that a gate holds. The loop
// does those with the plan it gives.
package rollout
