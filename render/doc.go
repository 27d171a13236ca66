// SPDX-License-Identifier: Apache-2.0

// Package render turns a ClusterSet config and one snapshot per member into
// each member's desired objects (ServiceImports, derived Services,
// EndpointSlices, gateway routes) and a report of export conditions,
// conflicts and traffic policies: the KEP-1645 rules, gateway planning and
// policies, nothing else.
//
// It is pure: no I/O, no clock, no randomness, no goroutines whose order can
// leak into output. The same input always gives the same output. Laying the
// output out as files (paths, YAML, SUMMARY.md) is layout's job, writing
// them to disk or Git is gitsync's, reading clusters is clusters'.
package render
