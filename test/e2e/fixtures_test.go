// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestFixturesApplyToRealAPIServers proves that what every scenario in
// fixtures/ renders for each member cluster is accepted, object by object, by
// a real kube-apiserver with the MCS CRDs installed (server-side apply,
// dryRun=All). Golden files alone would happily keep an invalid object.
func TestFixturesApplyToRealAPIServers(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "fixtures")
	members, err := readMembers(dir)
	if errors.Is(err, errNoFixtures) {
		t.Fatalf("%v: this test exists to check rendered fixtures, so having none is a failure, not a skip", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	runMembers(t, members, envtest.Start(t, 3))
}
