// SPDX-License-Identifier: Apache-2.0

// Package layout owns the rendered repository: every path in it (see
// paths.go), and every file format it holds.
//
//   - Files turns a render.Output into clusters/<member>/... (one YAML file
//     per object and a kustomization.yaml) and status/ (one report per
//     service, gateways.yaml, SUMMARY.md), byte for byte deterministic; the
//     YAML writer (yaml.go) is sigs.k8s.io/yaml's output without its cost,
//     fuzzed against it.
//   - ReadReport, ReadAllocations and ReadCommitted read a commit's files
//     back: the report, the gateway port allocations, the inputs and
//     status/members.yaml (FormatHealth, ParseHealth).
//   - Message is the commit message, the diff counterpart of SUMMARY.md;
//     SnapshotDigest names the inputs in its trailer.
//
// It applies no KEP rule (render does), does no I/O and no Git (gitsync
// does): files go in and out as a map of slash-separated paths to bytes.
package layout
