// SPDX-License-Identifier: Apache-2.0

// Package gitsync owns the rendered repository on disk and in Git.
//
// On disk: WriteTree makes the managed roots (clusters/, status/, inputs/,
// clusterset.yaml) hold exactly what was rendered, rewriting only files
// whose bytes differ and removing stale ones, all or nothing (a failed
// write is undone and reported as an *IOError); DiffTree shows what the
// next write would change. Neither reads or writes through a symbolic link
// or a special file under the roots: those are deleted and reported in
// Changes.Unsafe. A commit is read back without its links.
//
// In Git, with go-git (no git binary needed except by go-git's own file://
// transport):
//   - Open uses a local non-bare repository in place or clones any other
//     URL (bare path, file://, https://, ssh://, user@host:path) into a
//     workdir, reusing an earlier clone there; an empty remote works.
//     Branch and sub-path come from Options; AuthFrom turns the config's
//     credential references into a transport.AuthMethod (https token, ssh
//     key checked against known_hosts).
//   - Head, ReadFile and Files read a commit's tree (for apply --ref and
//     for the last known inputs), never the worktree.
//   - Commit decides "changed" by comparing blob hashes of the rendered
//     files with the HEAD tree (cached between commits), not by
//     Worktree.Status; it writes only changed and removed paths, reuses
//     untouched subtrees, and commits as Options.Author at Options.Clock.
//     It leaves the index behind: SyncIndex stages what commits changed
//     since, when the caller is idle (and ResetToRemote before a reset).
//   - Push reports a non-fast-forward rejection as ErrPushRejected;
//     ResetToRemote fetches and hard-resets; Publish runs produce, Commit,
//     Push with bounded fetch/reset/re-render retries.
//   - Signing and verifying (sign.go, verify.go): with Options.Signer,
//     every commit carries a gpgsig header as git writes it (SSH as
//     ssh-keygen -Y sign -n git makes it, or OpenPGP), so git
//     verify-commit and a forge accept it. With Options.Verify, Publish
//     verifies HEAD before each render on top (after Open and every
//     reset), and Verify checks any commit: it and every commit below it
//     down to the loop's own signed commit, trustedBefore or one already
//     verified must be signed by an accepted key, else a *VerifyError
//     names the commit, its author and subject and why. SignerFrom and
//     VerifierFrom build both from spec.git.signing and spec.git.verify.
//
// It is Git and file plumbing: paths, formats and the commit message
// belong to layout, which it does not import (nor render). It does not
// decide what to render, never reads cluster credentials, and
// never puts a Git credential (a signing key included) in an error or log line (URL passwords and
// tokens are redacted from transport errors). A Repo is not safe for
// concurrent use.
package gitsync
