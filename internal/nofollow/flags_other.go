// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package nofollow

// Elsewhere the caller's Lstat-based checks are the only guard.
const openFlags = 0

func isSymlinkLoop(error) bool { return false }
