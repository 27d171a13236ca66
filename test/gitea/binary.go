// SPDX-License-Identifier: Apache-2.0

package gitea

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// Binary returns the gitea binary and the directory holding its options/
// and templates/ (Gitea's STATIC_ROOT_PATH: without them it dies at start
// on a missing translation), from the testbin directory (envtest.AssetsDir:
// $KUBEBUILDER_ASSETS, else $MCS_GITOPS_TESTBIN, else
// ~/.cache/mcs-gitops/testbin), or an error saying how to build them.
func Binary() (bin, staticRoot string, err error) {
	dir, err := envtest.AssetsDir()
	if err != nil {
		return "", "", err
	}
	staticRoot = filepath.Join(dir, "gitea")
	bin = filepath.Join(staticRoot, "gitea")
	st, err := os.Stat(bin)
	if err == nil && (!st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0) {
		err = fmt.Errorf("%s: not an executable file", bin)
	}
	if err == nil {
		for _, sub := range []string{"options", "templates"} {
			if st, serr := os.Stat(filepath.Join(staticRoot, sub)); serr != nil || !st.IsDir() {
				err = fmt.Errorf("%s: no %s/ directory beside the binary", staticRoot, sub)
				break
			}
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("gitea not usable: %w\n"+
			"run `make testbin` to build it from source (a few minutes, once), "+
			"or point MCS_GITOPS_TESTBIN at a directory holding gitea/gitea, gitea/options and gitea/templates", err)
	}
	return bin, staticRoot, nil
}

// InCI reports whether the tests run in CI: the CI environment variable is
// set to anything but "", "0" or "false".
func InCI() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CI"))) {
	case "", "0", "false":
		return false
	}
	return true
}

// Require returns the gitea binary and its static root. When they are
// missing, t is skipped with instructions, except in CI, where `make test`
// builds them first and a missing binary is a failure.
func Require(t testing.TB) (bin, staticRoot string) {
	t.Helper()
	bin, staticRoot, err := Binary()
	if err == nil {
		return bin, staticRoot
	}
	if InCI() {
		t.Fatalf("%v\nCI is set, so this is a failure, not a skip: `make test` builds gitea before running tests", err)
	}
	t.Skipf("skipping Gitea test (not in CI): %v", err)
	return "", ""
}
