// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package gitsync

import (
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

func fillStat(*index.Entry, os.FileInfo) {}
