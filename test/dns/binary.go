// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// binaryName is the file test/testbin/build.sh writes next to kube-apiserver
// and etcd.
const binaryName = "coredns"

// Binary returns the path of the coredns binary in the testbin directory
// (envtest.AssetsDir: $KUBEBUILDER_ASSETS, else $MCS_GITOPS_TESTBIN, else
// ~/.cache/mcs-gitops/testbin), or an error saying how to build it.
func Binary() (string, error) {
	dir, err := envtest.AssetsDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, binaryName)
	st, err := os.Stat(p)
	if err == nil && (!st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0) {
		err = fmt.Errorf("%s: not an executable file", p)
	}
	if err != nil {
		return "", fmt.Errorf("coredns binary not usable: %w\n"+
			"run `make testbin` to build it from the Go module proxy (first time ~5 min), "+
			"or point KUBEBUILDER_ASSETS at a directory holding coredns", err)
	}
	return p, nil
}

// InCI reports whether the tests run in CI: the CI environment variable is
// set to anything but "", "0" or "false" (GitHub Actions, GitLab and most
// others set CI=true).
func InCI() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CI"))) {
	case "", "0", "false":
		return false
	}
	return true
}

// Require returns the coredns binary's path. When it is missing, t is skipped
// with instructions, except in CI (see InCI), where `make test` builds it
// first and a missing binary is a failure. Call it before starting
// apiservers so a skipped test costs nothing.
func Require(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err == nil {
		return bin
	}
	if InCI() {
		t.Fatalf("%v\nCI is set, so this is a failure, not a skip: `make test` builds coredns before running tests", err)
	}
	t.Skipf("skipping CoreDNS test (not in CI): %v", err)
	return ""
}
