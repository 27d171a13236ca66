// SPDX-License-Identifier: Apache-2.0

// Package nofollow opens files that a repository's content may have turned
// into symbolic links, named pipes or devices, without following or
// blocking on them.
//
// The rendered repository is written by pull requests as much as by
// mcs-gitops: a committed `status/x.yaml -> /proc/self/environ` must never be
// read into a diff, and a committed `clusters/a -> /etc` must never be
// written through. Everything that reads or writes under the managed
// directories goes through here or checks its entries' types itself.
//
// It owns only that check; it does not decide what to do with an unsafe
// entry (gitsync deletes it, the snapshot loader refuses it).
package nofollow
