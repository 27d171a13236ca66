// Package render turns a ClusterSet config and one snapshot per member into
// each member's desired objects (ServiceImports, derived Services,
// EndpointSlices) and a report of export conditions and conflicts,
// implementing the KEP-1645 rules.
//
// It is pure: no I/O, no clock, no randomness, no goroutines whose order can
// leak into output. The same input always gives the same bytes. Writing the
// files to disk or Git is gitsync's job; reading clusters is clusters'.
package render
