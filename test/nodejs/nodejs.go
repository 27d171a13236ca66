// SPDX-License-Identifier: Apache-2.0

// Package nodejs lays out a Node script beside packages `make testbin`
// installed into the testbin directory, for the tests that run real
// JavaScript tools (Mermaid's parser, a browser driver). It must not be
// imported by production code.
package nodejs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// Script writes script as name in a new directory beside a link to
// TESTBIN/<dir>/node_modules, where Node's module resolution finds the
// packages, and returns the directory; an error says what is missing
// (node, or one of pkgs) and how to install it.
func Script(t testing.TB, dir string, pkgs []string, name string, script []byte) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", errors.New("node not found (make testbin installs nodejs with apt-get)")
	}
	assets, err := envtest.AssetsDir()
	if err != nil {
		return "", err
	}
	modules := filepath.Join(assets, dir, "node_modules")
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(modules, pkg, "package.json")); err != nil {
			return "", fmt.Errorf("%s not installed in %s (run make testbin)", pkg, modules)
		}
	}
	out := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(out, "node_modules")); err != nil {
		return "", err
	}
	return out, os.WriteFile(filepath.Join(out, name), script, 0o644)
}
