// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/gitea"
)

// TestReviewProposesAnInventoryMember: under review mode a cluster that
// joins the inventory is a structural change. The branch records the
// membership at once (status/inventory.yaml) but the new member imports
// nothing until a person merges its proposal; the branch renders to
// itself offline meanwhile.
func TestReviewProposesAnInventoryMember(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcs-gitops, runs Gitea and four apiservers")
	}
	srv := gitea.Start(t)
	cloneURL := srv.CreateRepo(t, "fleet")
	alice := srv.User(t, "alice")
	srv.Collaborator(t, "fleet", alice.Name)
	f := newInventoryFleet(t, 3, fmt.Sprintf(`  git:
    url: %s
    auth:
      token: {path: forge-token}
  review:
    enabled: false
    forge:
      provider: gitea
      url: %s
      repository: %s/fleet
      token: {path: forge-token}
`, cloneURL, srv.URL, gitea.AdminName))
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "forge-token"), []byte(srv.Token), 0o600))
	ctx := context.Background()
	m0, m1, m2 := f.members[0], f.members[1], f.members[2]
	f.join(m0, map[string]string{"region": "eu"})
	f.join(m1, map[string]string{"region": "eu"})
	for _, m := range f.members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "shop"))
	}
	export(t, m0, "shop", "cart", 80, "10.1.0.10")
	sync := func() string {
		t.Helper()
		out, err := exec.Command(f.binary, "sync", "--config", f.config, "--workdir", filepath.Join(f.dir, "work"),
			"--management-kubeconfig", f.mgmtKC, "--lineage-record", "").CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	// Approved as it is, then review mode on.
	sync()
	require.True(t, importedIPs(m1, "cart"))
	cfg, err := os.ReadFile(f.config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.config, []byte(strings.Replace(string(cfg), "enabled: false", "enabled: true", 1)), 0o644))

	f.join(m2, map[string]string{"region": "eu"})
	// The first cycle records the member and proposes it whole
	// (member/cluster-4); once the branch holds its snapshot, what is left
	// to approve is its import, proposed as such. A few cycles settle it.
	for range 3 {
		sync()
	}
	var pulls []giteaPull
	code, body := srv.API(t, srv.Token, http.MethodGet, fmt.Sprintf("repos/%s/fleet/pulls?state=open", gitea.AdminName), nil, &pulls)
	require.Equal(t, http.StatusOK, code, string(body))
	number := 0
	for _, p := range pulls {
		t.Logf("open pull %d from %s: %s", p.Number, p.Head.Ref, p.Title)
		if strings.HasPrefix(p.Head.Ref, layout.ProposalPrefix) && strings.Contains(p.Head.Ref, m2.Name) {
			number = p.Number
		}
	}
	require.NotZero(t, number, "no proposal for the new member")

	// The branch: the membership is recorded, the member imports nothing,
	// and the commit renders to itself.
	clone := filepath.Join(t.TempDir(), "main")
	_, err = git.PlainClone(clone, false, &git.CloneOptions{URL: cloneURL, Auth: &githttp.BasicAuth{Username: "git", Password: srv.Token}})
	require.NoError(t, err)
	rec, err := os.ReadFile(filepath.Join(clone, layout.InventoryFile))
	require.NoError(t, err)
	assert.Contains(t, string(rec), "name: "+m2.Name)
	assert.False(t, importedIPs(m2, "cart"), "not before the merge")
	assert.NoFileExists(t, filepath.Join(clone, "clusters", m2.Name, "shop", "cart", "serviceimport.yaml"))
	out, err := exec.Command(f.binary, "render", "--check", "--config", filepath.Join(clone, layout.ConfigFile),
		"--inputs", filepath.Join(clone, layout.InputsDir), "--out", clone).CombinedOutput()
	require.NoError(t, err, "the branch renders to itself offline: %s", out)

	// A person merges: the member imports.
	srv.Merge(t, alice.Token, "fleet", number)
	eventually(t, 60*time.Second, func() bool {
		sync()
		return importedIPs(m2, "cart")
	}, "the merged member never imported")
}
