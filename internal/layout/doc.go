// SPDX-License-Identifier: Apache-2.0

// Package layout owns the rendered repository: every path in it (see
// paths.go), and every file format it holds.
//
//   - Files turns a render.Output into clusters/<member>/... (one YAML file
//     per object and a kustomization.yaml) and status/ (one report per
//     service, gateways.yaml, SUMMARY.md), byte for byte deterministic,
//     through internal/yamlfast.
//   - ReadReport, ReadAllocations and ReadCommitted read a commit's files
//     back: the report, the gateway port allocations, the inputs,
//     status/members.yaml (FormatHealth, ParseHealth) and
//     status/review.yaml (ReviewState). The loop reads a commit and the
//     offline commands read a checkout through ReadCommitted alike.
//   - Message is the commit message, the diff counterpart of SUMMARY.md;
//     SnapshotDigest names the inputs in its trailer. ChangeSummary is,
//     from the same diff, what a change does per member (CI's --summary).
//
// It applies no KEP rule (render does), does no I/O and no Git (gitsync
// does): files go in and out as a map of slash-separated paths to bytes.
package layout
