// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeChecksums writes checksums.txt for files in dir in the format
// `sha256sum -c` reads, and returns its bytes.
func writeChecksums(dir string, files []string) ([]byte, error) {
	var b strings.Builder
	for _, f := range files {
		sum, err := fileSHA256(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("checksums: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, f)
	}
	out := []byte(b.String())
	return out, os.WriteFile(filepath.Join(dir, ChecksumsFile), out, 0o644)
}

// digestHex is the hex of "sha256:HEX".
func digestHex(d string) string { return strings.TrimPrefix(d, "sha256:") }
