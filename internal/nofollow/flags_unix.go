// SPDX-License-Identifier: Apache-2.0

//go:build unix

package nofollow

import (
	"errors"
	"syscall"
)

// O_NOFOLLOW makes open fail on a symbolic link as the last component;
// O_NONBLOCK makes opening a named pipe return at once.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

func isSymlinkLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
