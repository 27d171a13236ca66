// SPDX-License-Identifier: Apache-2.0

// Package apply owns getting what Git holds into the member clusters.
//
// For one member and one commit's files (never the worktree):
//
//   - Build (build.go, build_chunks.go, kustomization.go): kustomize build of
//     clusters/<member>/ from an in-memory filesystem, one kustomize run at
//     a time, in chunks of the resource list whose outputs concatenate to
//     one run's (a single run costs the square of the object count); a
//     BuildCache reruns only the chunks whose files changed. The member's
//     kustomization.yaml may only list YAML files of its own directory (no
//     generators, patches, remote bases or plugins); every YAML file there
//     and every built object must be a kind the contract allows
//     (contract.CheckKind: ServiceImport,
//     Service, EndpointSlice, Gateway API HTTPRoute/TCPRoute/ListenerSet,
//     the member's own Gateway as listeners to merge into it, and Namespace
//     for create only), or the build fails naming the file and kind.
//   - Applier.Apply (apply.go): with a Memory (memory.go), objects whose
//     prepared bytes were applied before and not since forgotten are
//     skipped; for the rest, collision check (collision.go: an existing
//     object without this applier's owner labels is a user's; it is reported
//     and skipped, never overwritten; one metadata list per kind and
//     namespace for many objects, a read each for a few), then the apply
//     with field manager "mcs-gitops" and the owner labels (labels.go): one
//     server-side apply PATCH each, in parallel, for the objects whose
//     outcome is known before asking (create.go: missing, or holding other
//     bytes of ours the memory knows), Flux ssa ApplyAllStaged for the rest
//     and for what the member did not take that way; prune (prune.go: only
//     objects carrying all three owner labels for this ClusterSet and
//     member that are no longer rendered; never a Namespace; with a
//     Memory, only those that left the desired set since the last prune,
//     each read by name when few),
//     the member's Gateway (gateway.go: with tcpListeners: Gateway, the
//     rendered listeners are merged into the user's Gateway without
//     forcing, under no owner label; it is never created or deleted, and
//     once no commit declares listeners for it, prune releases ours), then
//     status write-back (status.go, policy_status.go, ips.go):
//     ServiceImport status.clusters, ServiceExport conditions and this
//     member's GlobalTrafficPolicy conditions, clusters and weights through
//     the status subresource ("mcs-gitops-status"), ServiceImport spec.ips
//     from the derived Service's cluster IPs ("mcs-gitops-ips"), each
//     compared with the live object (exports and policies: one list per
//     kind, or a read each for the few services whose part of the
//     snapshot or report changed) and written only when it differs, so an
//     unchanged world changes no resourceVersion.
//   - ApplyAll (all.go): every member in parallel; one member failing
//     (build, apply, even a panic) is its own Result.Err.

// It must not: decide what to render, read or write Git, create or delete
// a Namespace other than creating a rendered one that is missing, create or
// delete a Gateway, touch an object without its owner labels other than
// merging rendered listeners into the member's own Gateway, or log object
// contents or credentials.
package apply
