// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/fleetstatus"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/internal/review/forge"
	"github.com/mcs-gitops/mcs-gitops/internal/review/propose"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/browser"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/gitea"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

// reviewWorld is a world whose repository lives on a real Gitea, with
// review mode on: the loop pushes over HTTP with the admin's token and
// opens pull requests with it; a second user, alice, merges and closes
// them as a reviewer would.
type reviewWorld struct {
	*world
	srv   *gitea.Server
	alice *gitea.User
	clone string
}

func newReviewWorld(t testing.TB, kinds string) *reviewWorld {
	t.Helper()
	return newGiteaWorld(t, true, "", kinds)
}

// newGiteaWorld is a world on a real Gitea, with review mode on or off;
// sync is appended under spec.sync, review under spec.review.
func newGiteaWorld(t testing.TB, review bool, sync, reviewYAML string) *reviewWorld {
	t.Helper()
	return newGiteaWorldStacks(t, []envtest.Stack{envtest.DualStack, envtest.DualStack, envtest.DualStack}, review, sync, reviewYAML)
}

// newGiteaWorldStacks is newGiteaWorld with one member per stack.
func newGiteaWorldStacks(t testing.TB, stacks []envtest.Stack, review bool, sync, reviewYAML string) *reviewWorld {
	t.Helper()
	srv := gitea.Start(t)
	clone := srv.CreateRepo(t, "fleet")
	alice := srv.User(t, "alice")
	srv.Collaborator(t, "fleet", alice.Name)
	extra := sync + fmt.Sprintf("  review:\n    enabled: %t\n%s    forge:\n      provider: gitea\n      url: %s\n      repository: %s/fleet\n      token:\n        path: forge-token\n",
		review, reviewYAML, srv.URL, gitea.AdminName)
	w := newWorldStacks(t, stacks, nil, extra)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "forge-token"), []byte(srv.Token), 0o600))
	rw := &reviewWorld{world: w, srv: srv, alice: alice, clone: clone}
	w.loop = rw.newLoop(filepath.Join(t.TempDir(), "clone"))
	return rw
}

// newLoop is world.newLoop against Gitea, with review mode wired the way
// the sync command wires it.
func (rw *reviewWorld) newLoop(workdir string) *reconcile.Loop {
	t := rw.t
	data, err := os.ReadFile(rw.config)
	require.NoError(t, err)
	cfg, err := v1alpha1.Parse(rw.config, data)
	require.NoError(t, err)
	ctx := context.Background()
	log := loopLog(t)
	read := func(cs *v1alpha1.CredentialSource) ([]byte, error) {
		if filepath.IsAbs(cs.Path) {
			return os.ReadFile(cs.Path)
		}
		return os.ReadFile(filepath.Join(rw.dir, cs.Path))
	}
	signer, err := gitsync.SignerFrom(cfg.Spec.Git.Signing, read)
	require.NoError(t, err)
	verifier, err := gitsync.VerifierFrom(cfg.Spec.Git.Verify, signer, read)
	require.NoError(t, err)
	repo, err := gitsync.Open(ctx, gitsync.Options{
		URL: rw.clone, Branch: cfg.Spec.Git.Branch, Workdir: workdir,
		Auth:   &githttp.BasicAuth{Username: "git", Password: rw.srv.Token},
		Author: gitsync.Signature{Name: cfg.Spec.Git.Author.Name, Email: cfg.Spec.Git.Author.Email}, Log: log,
		Signer: signer, Verify: verifier,
	})
	require.NoError(t, err)
	set := clusters.Connect(ctx, cfg, clusters.ConnectOptions{BaseDir: rw.dir})
	loop := &reconcile.Loop{Config: cfg, ConfigBytes: data, Members: set, Repo: repo, Log: log}
	if !cfg.Spec.Review.Enabled {
		return loop
	}
	fc, err := forge.New(cfg, read)
	require.NoError(t, err)
	loop.Review, err = propose.New(cfg, fc)
	require.NoError(t, err)
	if cfg.Spec.Review.PollInterval == "" {
		loop.Review.Poll = 0 // every cycle asks the forge
	}
	return loop
}

// sync runs cycles until one asks for no other, as run would: a cycle
// that opened a request or saw a merge on its poll asks for another.
func (rw *reviewWorld) sync() *reconcile.Outcome {
	rw.t.Helper()
	var out *reconcile.Outcome
	for range 5 {
		if out = rw.world.sync(); !out.Again {
			return out
		}
	}
	rw.t.Fatalf("the loop still asks for another cycle after 5")
	return out
}

// pulls lists the repository's pull requests in state ("open", "closed").
func (rw *reviewWorld) pulls(state string) []giteaPull {
	rw.t.Helper()
	var out []giteaPull
	code, body := rw.srv.API(rw.t, rw.srv.Token, http.MethodGet, fmt.Sprintf("repos/%s/fleet/pulls?state=%s", gitea.AdminName, state), nil, &out)
	require.Equal(rw.t, http.StatusOK, code, string(body))
	return out
}

type giteaPull struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
	Merged  bool   `json:"merged"`
	Head    struct {
		Ref string `json:"ref"`
	} `json:"head"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

// reviewState reads status/review.yaml at the remote's main.
func (rw *reviewWorld) reviewState() *layout.ReviewState {
	rw.t.Helper()
	head, err := rw.loop.Repo.Head()
	require.NoError(rw.t, err)
	b, err := rw.loop.Repo.ReadFile(head, layout.ReviewFile)
	require.NoError(rw.t, err)
	st, err := layout.ParseReviewState(b)
	require.NoError(rw.t, err)
	return st
}

// start makes namespace demo in every member and syncs: the members,
// approved, in a first commit.
func (rw *reviewWorld) start() {
	rw.t.Helper()
	for _, m := range rw.members {
		require.NoError(rw.t, envtest.EnsureNamespaces(context.Background(), m.Client, "demo"))
	}
	rw.sync()
}

// approve merges the proposal of service demo/name as alice, and syncs.
func (rw *reviewWorld) approve(name string) {
	rw.t.Helper()
	rw.srv.Merge(rw.t, rw.alice.Token, "fleet", numberOf(rw.t, rw.pulls("open"), layout.ProposalBranch("service/demo/"+name)))
	rw.sync()
}

// branchCommit is the commit branch is at on Gitea, and its first parent.
func (rw *reviewWorld) branchCommit(branch string) (commit, parent string) {
	rw.t.Helper()
	commit, parents := rw.branchHead(branch)
	require.NotEmpty(rw.t, parents, "commit %s of %s", commit, branch)
	return commit, parents[0]
}

// branchHead is the commit branch is at on Gitea, and its parents.
func (rw *reviewWorld) branchHead(branch string) (commit string, parents []string) {
	rw.t.Helper()
	var commits []struct {
		SHA     string `json:"sha"`
		Parents []struct {
			SHA string `json:"sha"`
		} `json:"parents"`
	}
	code, body := rw.srv.API(rw.t, rw.srv.Token, http.MethodGet,
		fmt.Sprintf("repos/%s/fleet/commits?sha=%s&limit=1&stat=false", gitea.AdminName, url.QueryEscape(branch)), nil, &commits)
	require.Equal(rw.t, http.StatusOK, code, string(body))
	require.NotEmpty(rw.t, commits, "no commit on %s", branch)
	for _, p := range commits[0].Parents {
		parents = append(parents, p.SHA)
	}
	return commits[0].SHA, parents
}

// openPull waits until a pull request from branch is open and returns its
// number.
func (rw *reviewWorld) openPull(branch string, within time.Duration) int {
	rw.t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, p := range rw.pulls("open") {
			if p.Head.Ref == branch {
				return p.Number
			}
		}
		if time.Now().After(deadline) {
			rw.t.Fatalf("no pull request from %s within %s", branch, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func imported(m *envtest.Cluster, ns, name string) bool {
	return exists(m.Client, &mcsv1alpha1.ServiceImport{}, ns, name)
}

func importedAddresses(t testing.TB, m *envtest.Cluster, ns, name string) []string {
	t.Helper()
	var slices discoveryv1.EndpointSliceList
	require.NoError(t, m.Client.List(context.Background(), &slices, client.InNamespace(ns),
		client.MatchingLabels{"multicluster.kubernetes.io/service-name": name}))
	var out []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			out = append(out, e.Addresses...)
		}
	}
	return out
}

func exportCondition(t *testing.T, m *envtest.Cluster, ns, name, typ string) (status, reason, message string) {
	t.Helper()
	var se mcsv1alpha1.ServiceExport
	require.NoError(t, m.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &se))
	for _, c := range se.Status.Conditions {
		if string(c.Type) == typ {
			return string(c.Status), c.Reason, c.Message
		}
	}
	return "", "", ""
}

// TestReviewModeWithGitea runs the loop against a real Gitea: an export is
// proposed, not applied; churn lands directly; the merge applies it; a
// closed request is recorded as rejected and not proposed again; a change
// that goes away closes its request.
// checkDrawn opens a pull request page in a real browser and asserts
// Gitea drew its Mermaid picture as an SVG with the members as nodes.
// MCS_SCREENSHOT=FILE keeps the screenshot (how docs/ci.md's is made).
func checkDrawn(t *testing.T, url string) {
	t.Helper()
	page := browser.Open(t, url, ".issue-content-comment")
	if out := os.Getenv("MCS_SCREENSHOT"); out != "" {
		require.NoError(t, os.WriteFile(out, page.PNG, 0o644))
	}
	assert.Empty(t, page.Problems, "the page loaded and drew")
	assert.Empty(t, page.Errors, "no diagram failed to draw")
	require.Len(t, page.Diagrams, 1, "one picture in the body")
	d := page.Diagrams[0]
	assert.True(t, d.SVG, "Gitea drew the picture as an SVG")
	assert.GreaterOrEqual(t, d.Nodes, 2, "exporter and importer are nodes")
	assert.GreaterOrEqual(t, d.Edges, 1, "the reach gained is an edge")
	assert.Contains(t, d.Text, "cluster-1")
	assert.Contains(t, d.Text, "cluster-2")
	assert.Greater(t, len(page.PNG), 10_000, "a screenshot of the comment")
}

func TestReviewModeWithGitea(t *testing.T) {
	rw := newReviewWorld(t, "")
	ctx := context.Background()
	c1, c2, c3 := rw.member("cluster-1"), rw.member("cluster-2"), rw.member("cluster-3")
	for _, m := range rw.members {
		require.NoError(t, envtest.EnsureNamespaces(ctx, m.Client, "demo"))
	}

	// A first cycle commits the members, with nothing exported: nothing
	// structural, nothing proposed.
	rw.sync()
	assert.Empty(t, rw.pulls("all"))

	t.Log("cluster-1 exports demo/web: proposed, not applied")
	export(t, c1, "demo", "web", 80, "10.1.0.10")
	out := rw.world.sync()
	assert.True(t, out.Again, "a request was opened: the next cycle records its URL")
	open := rw.pulls("open")
	require.Len(t, open, 1)
	pr := open[0]
	assert.Equal(t, layout.ProposalBranch("service/demo/web"), pr.Head.Ref)
	assert.Contains(t, pr.Title, "cluster-1 exports demo/web")
	assert.Contains(t, pr.Body, "cluster-2 imports demo/web")
	assert.Contains(t, pr.Body, "- `cluster-2`:\n  - `+ demo/web/derived-service.yaml`\n", "the rendered change per member")
	assert.Contains(t, pr.Body, "`+ demo/web/serviceimport.yaml`")
	assert.Contains(t, pr.Body, "### What it does to who can reach what\n\n- cluster-1 exports demo/web to cluster-2, cluster-3\n", "the change model's view of the proposal, naming the actor")
	assert.Contains(t, pr.Body, "```mermaid\n", "the picture of the reach it adds")
	assert.Contains(t, pr.Body, "| cluster-2 | 1 | 0 | 0 | 0 |")
	checkDrawn(t, pr.HTMLURL)
	var labels []string
	for _, l := range pr.Labels {
		labels = append(labels, l.Name)
	}
	assert.ElementsMatch(t, []string{"mcs-gitops", "review/Export", "review/Import"}, labels)
	for _, m := range rw.members {
		assert.False(t, imported(m, "demo", "web"), "%s: nothing imported before the merge", m.Name)
	}
	status, reason, msg := exportCondition(t, c1, "demo", "web", "Ready")
	assert.Equal(t, "False", status)
	assert.Equal(t, propose.ConditionPendingReview, reason)

	rw.sync() // records the URL
	st := rw.reviewState()
	require.Len(t, st.Proposals, 1)
	assert.Equal(t, pr.HTMLURL, st.Proposals[0].URL)
	assert.Equal(t, pr.Number, st.Proposals[0].Number)
	_, reason, msg = exportCondition(t, c1, "demo", "web", propose.ConditionPendingReview)
	assert.Equal(t, propose.ReasonProposalOpen, reason)
	assert.Contains(t, msg, pr.HTMLURL, "the export names the request")
	view, err := fleetstatus.Build(ctx, fleetstatus.Options{Repo: rw.loop.Repo, Members: rw.loop.Members})
	require.NoError(t, err)
	var text strings.Builder
	require.NoError(t, view.WriteText(&text))
	assert.Contains(t, text.String(), "REVIEW\n  waiting   service/demo/web (Export, Import): "+pr.HTMLURL+"\n", "mcs-gitops status shows what waits")
	assert.Contains(t, text.String(), "  held      demo/web is not imported into cluster-2 yet\n")
	out = rw.sync()
	assert.False(t, out.Committed, "nothing new: no commit, no update of the request")
	assert.Len(t, rw.pulls("all"), 1)

	t.Log("churn on an approved export goes straight to main while the proposal waits")
	export(t, c3, "demo", "api", 8080, "10.3.0.10")
	rw.sync()
	apiPR := rw.pulls("open")
	require.Len(t, apiPR, 2)
	// Approve api first so there is something for churn to move.
	apiNumber := numberOf(t, apiPR, layout.ProposalBranch("service/demo/api"))
	rw.srv.Merge(t, rw.alice.Token, "fleet", apiNumber)
	rw.sync()
	for _, m := range rw.members {
		assert.True(t, imported(m, "demo", "api"), "%s: api applied after its merge", m.Name)
		assert.False(t, imported(m, "demo", "web"), "%s: web still waits", m.Name)
	}
	tenant.Create(t, c3.Client, tenant.Slice(tenant.Service("demo", "api", tenant.Port("http", 8080, 8080)), "api-more", discoveryv1.AddressTypeIPv4, tenant.Ready("10.3.0.11")...))
	before := len(rw.pulls("all"))
	out = rw.sync()
	require.True(t, out.Committed, "churn is committed to main")
	assert.Len(t, rw.pulls("all"), before, "churn opens no request")
	assert.ElementsMatch(t, []string{"10.3.0.10", "10.3.0.11"}, importedAddresses(t, c2, "demo", "api"))

	t.Log("merging web's proposal applies it everywhere")
	webNumber := numberOf(t, rw.pulls("open"), layout.ProposalBranch("service/demo/web"))
	rw.srv.Merge(t, rw.alice.Token, "fleet", webNumber)
	rw.sync()
	for _, m := range rw.members {
		assert.True(t, imported(m, "demo", "web"), "%s: web applied after its merge", m.Name)
	}
	assert.ElementsMatch(t, []string{"10.1.0.10"}, importedAddresses(t, c2, "demo", "web"))
	assert.Empty(t, rw.reviewState().Proposals)
	status, _, _ = exportCondition(t, c1, "demo", "web", "Ready")
	assert.Equal(t, "True", status)

	t.Log("a closed request is a rejection: recorded, held, not proposed again")
	export(t, c2, "demo", "db", 5432, "10.2.0.10")
	rw.sync()
	dbNumber := numberOf(t, rw.pulls("open"), layout.ProposalBranch("service/demo/db"))
	rw.srv.ClosePull(t, rw.alice.Token, "fleet", dbNumber)
	rw.sync()
	rw.sync()
	st = rw.reviewState()
	require.Len(t, st.Rejected, 1)
	assert.Equal(t, "service/demo/db", st.Rejected[0].Name)
	assert.Empty(t, rw.pulls("open"), "not proposed again")
	_, reason, _ = exportCondition(t, c2, "demo", "db", propose.ConditionPendingReview)
	assert.Equal(t, propose.ReasonProposalRejected, reason)
	for _, m := range rw.members {
		assert.False(t, imported(m, "demo", "db"), "%s: a rejected export is not applied", m.Name)
	}

	t.Log("a change that goes away closes its request")
	export(t, c1, "demo", "tmp", 80, "10.1.0.99")
	rw.sync()
	tmpNumber := numberOf(t, rw.pulls("open"), layout.ProposalBranch("service/demo/tmp"))
	unexport(t, c1, "demo", "tmp")
	rw.sync()
	var closed giteaPull
	code, body := rw.srv.API(t, rw.srv.Token, http.MethodGet, fmt.Sprintf("repos/%s/fleet/pulls/%d", gitea.AdminName, tmpNumber), nil, &closed)
	require.Equal(t, http.StatusOK, code, string(body))
	assert.False(t, closed.Merged)
	assert.Empty(t, rw.pulls("open"))
	for _, p := range rw.reviewState().Proposals {
		assert.NotEqual(t, "service/demo/tmp", p.Name)
	}
}

func numberOf(t testing.TB, pulls []giteaPull, branch string) int {
	t.Helper()
	for _, p := range pulls {
		if p.Head.Ref == branch {
			return p.Number
		}
	}
	t.Fatalf("no pull request from %s among %d", branch, len(pulls))
	return 0
}

// removeOnBranch deletes every file under dir (relative to the repository
// root) on branch and pushes, as a reviewer editing a proposal would.
func (rw *reviewWorld) removeOnBranch(token, branch, dir string) plumbing.Hash {
	return rw.pushAs(token, branch, branch, "cluster-2 does not need web", func(wt *git.Worktree) {
		_, err := wt.Remove(dir)
		require.NoError(rw.t, err)
	})
}

// editReview pushes to main a commit that rewrites status/review.yaml with
// edit, as a person with write access could.
func (rw *reviewWorld) editReview(token string, edit func(string) string) plumbing.Hash {
	return rw.pushAs(token, "main", "main", "edit the review record", func(wt *git.Worktree) {
		b, err := util.ReadFile(wt.Filesystem, layout.ReviewFile)
		require.NoError(rw.t, err)
		require.NoError(rw.t, util.WriteFile(wt.Filesystem, layout.ReviewFile, []byte(edit(string(b))), 0o644))
		_, err = wt.Add(layout.ReviewFile)
		require.NoError(rw.t, err)
	})
}

// pushAs clones branch from Gitea as the token's user, lets change edit
// the worktree (nil: an empty commit), commits with message and pushes
// the result to target. It returns the pushed commit.
func (rw *reviewWorld) pushAs(token, branch, target, message string, change func(*git.Worktree)) plumbing.Hash {
	t := rw.t
	t.Helper()
	auth := &githttp.BasicAuth{Username: "alice", Password: token}
	repo, err := git.Clone(memory.NewStorage(), memfs.New(), &git.CloneOptions{
		URL: rw.clone, Auth: auth, ReferenceName: plumbing.NewBranchReferenceName(branch), SingleBranch: true,
	})
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	if change != nil {
		change(wt)
	}
	h, err := wt.Commit(message, &git.CommitOptions{
		AllowEmptyCommits: true,
		Author:            &object.Signature{Name: "alice", Email: "alice@example.com", When: time.Now()},
	})
	require.NoError(t, err)
	require.NoError(t, repo.Push(&git.PushOptions{Auth: auth, RefSpecs: []config.RefSpec{
		config.RefSpec("refs/heads/" + branch + ":refs/heads/" + target),
	}}))
	return h
}

// TestReviewOverrideInTheProposal: a reviewer takes one member's import out
// of a proposal and merges it. That member does not get the import, the
// branch records the override, and it is not proposed again until the
// service's exports change.
func TestReviewOverrideInTheProposal(t *testing.T) {
	rw := newReviewWorld(t, "")
	ctx := context.Background()
	c1, c2, c3 := rw.member("cluster-1"), rw.member("cluster-2"), rw.member("cluster-3")
	rw.start()
	export(t, c1, "demo", "web", 80, "10.1.0.10")
	rw.sync()
	branch := layout.ProposalBranch("service/demo/web")
	number := numberOf(t, rw.pulls("open"), branch)

	rw.removeOnBranch(rw.alice.Token, branch, "clusters/cluster-2/demo/web")
	rw.srv.Merge(t, rw.alice.Token, "fleet", number)
	rw.sync()

	assert.True(t, imported(c1, "demo", "web"))
	assert.True(t, imported(c3, "demo", "web"))
	assert.False(t, imported(c2, "demo", "web"), "the reviewer took cluster-2 out")
	st := rw.reviewState()
	require.Len(t, st.Overrides, 1)
	assert.Equal(t, layout.OverrideRecord{Member: "cluster-2", Namespace: "demo", Name: "web", Digest: st.Overrides[0].Digest}, st.Overrides[0])
	assert.Contains(t, st.HeldImports, layout.HeldImport{Member: "cluster-2", Namespace: "demo", Name: "web"})
	assert.Empty(t, rw.pulls("open"), "not proposed again")

	// Churn keeps the override; a change of the export ends it.
	tenant.Create(t, c1.Client, tenant.Slice(tenant.Service("demo", "web", tenant.Port("http", 80, 8080)), "web-more", discoveryv1.AddressTypeIPv4, tenant.Ready("10.1.0.11")...))
	rw.sync()
	assert.False(t, imported(c2, "demo", "web"))
	assert.Empty(t, rw.pulls("open"))
	assert.ElementsMatch(t, []string{"10.1.0.10", "10.1.0.11"}, importedAddresses(t, c3, "demo", "web"))

	var svc corev1.Service
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, &svc))
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "grpc", Port: 9090, Protocol: corev1.ProtocolTCP})
	require.NoError(t, c1.Client.Update(ctx, &svc))
	rw.sync()
	open := rw.pulls("open")
	require.Len(t, open, 1)
	assert.Contains(t, open[0].Body, "cluster-2 imports demo/web", "the export changed: cluster-2's import is proposed again")
	assert.Empty(t, rw.reviewState().Overrides)
}

// TestReviewOnAMixedFleet: review mode on a fleet of an IPv4-only, an
// IPv6-only and a dual-stack member. Each single-stack export waits for
// its merge, then every member imports it with what it can serve (the
// other single-stack member the import alone, with no endpoints), and
// churn of an approved IPv6 export flows while the IPv4 one still waits.
func TestReviewOnAMixedFleet(t *testing.T) {
	rw := newGiteaWorldStacks(t, []envtest.Stack{envtest.IPv4Only, envtest.IPv6Only, envtest.DualStack}, true, "", "")
	rw.loop.Review.Poll = 0 // every cycle asks the forge
	ctx := context.Background()
	v4, v6, dual := rw.member("cluster-1"), rw.member("cluster-2"), rw.member("cluster-3")
	rw.start()
	export(t, v4, "demo", "web", 80, "10.1.0.10")
	api := tenant.Service("demo", "api", tenant.Port("grpc", 9090, 9090))
	tenant.Create(t, v6.Client, api,
		tenant.Slice(api, "api-cluster-2", discoveryv1.AddressTypeIPv6, tenant.Ready("fd00:2::10")...),
		tenant.Export("demo", "api"))
	rw.sync()
	for _, name := range []string{"web", "api"} {
		numberOf(t, rw.pulls("open"), layout.ProposalBranch("service/demo/"+name))
		for _, m := range rw.members {
			assert.False(t, imported(m, "demo", name), "%s waits in %s", name, m.Name)
		}
	}

	rw.approve("api")
	assert.Equal(t, []string{"fd00:2::10"}, importedAddresses(t, dual, "demo", "api"))
	assert.True(t, imported(v4, "demo", "api"), "the IPv4-only member is told the service exists")
	assert.Empty(t, importedAddresses(t, v4, "demo", "api"), "and gets none of its IPv6 endpoints")
	assert.False(t, imported(dual, "demo", "web"), "web still waits")

	// Churn of the approved IPv6 export while web waits.
	var sl discoveryv1.EndpointSlice
	require.NoError(t, v6.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "api-cluster-2"}, &sl))
	sl.Endpoints = tenant.Ready("fd00:2::11")
	require.NoError(t, v6.Client.Update(ctx, &sl))
	require.True(t, rw.sync().Committed)
	assert.Equal(t, []string{"fd00:2::11"}, importedAddresses(t, dual, "demo", "api"))
	assert.Len(t, rw.pulls("open"), 1, "churn opens nothing")

	rw.approve("web")
	assert.Equal(t, []string{"10.1.0.10"}, importedAddresses(t, dual, "demo", "web"))
	assert.True(t, imported(v6, "demo", "web"))
	assert.Empty(t, importedAddresses(t, v6, "demo", "web"))
	assert.Empty(t, rw.pulls("open"))
	assert.Empty(t, rw.reviewState().Proposals)
}

// TestReviewKeepsAReviewersEdit: once a reviewer pushed to a proposal's
// branch, the loop never rebuilds it over their commit, even when the
// change it proposes evolves; churn goes on being applied.
func TestReviewKeepsAReviewersEdit(t *testing.T) {
	rw := newReviewWorld(t, "")
	ctx := context.Background()
	c1, c2 := rw.member("cluster-1"), rw.member("cluster-2")
	rw.start()
	export(t, c1, "demo", "api", 8080, "10.1.0.10")
	export(t, c1, "demo", "web", 80, "10.1.0.20")
	rw.sync()
	rw.approve("api")
	require.True(t, imported(c2, "demo", "api"))
	branch := layout.ProposalBranch("service/demo/web")
	number := numberOf(t, rw.pulls("open"), branch)

	edit := rw.removeOnBranch(rw.alice.Token, branch, "clusters/cluster-2/demo/web")
	// The change evolves (a port), and api's churn in the same member's
	// inputs overlaps the proposal: both would rebuild it.
	var svc corev1.Service
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, &svc))
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "grpc", Port: 9090, Protocol: corev1.ProtocolTCP})
	require.NoError(t, c1.Client.Update(ctx, &svc))
	var sl discoveryv1.EndpointSlice
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "api-cluster-1"}, &sl))
	sl.Endpoints = tenant.Ready("10.1.0.11")
	require.NoError(t, c1.Client.Update(ctx, &sl))
	out := rw.sync()
	require.True(t, out.Committed)
	assert.Equal(t, []string{"10.1.0.11"}, importedAddresses(t, c2, "demo", "api"), "churn is applied")
	head, _ := rw.branchCommit(branch)
	assert.Equal(t, edit.String(), head, "the reviewer's commit stays")
	assert.Equal(t, number, numberOf(t, rw.pulls("open"), branch), "the request stays open")
	rw.sync()
	head, _ = rw.branchCommit(branch)
	assert.Equal(t, edit.String(), head)
}

// TestReviewProposalMergesAfterChurn: a proposal is rebuilt on the branch
// only when the forge is polled, so churn lands on the branch under an
// open proposal it was not rebased on. Churn of the very service and
// member the proposal changes (a port added to cluster-1's api while
// cluster-1's api endpoints move) must still merge cleanly, and the merge
// must apply both.
func TestReviewProposalMergesAfterChurn(t *testing.T) {
	rw := newReviewWorld(t, "")
	ctx := context.Background()
	c1, c2 := rw.member("cluster-1"), rw.member("cluster-2")
	rw.start()
	export(t, c1, "demo", "api", 8080, "10.1.0.10")
	export(t, c2, "demo", "web", 80, "10.2.0.10")
	rw.sync()
	rw.approve("api") // both change status/review.yaml: the other is rebuilt on the merge
	rw.approve("web")
	require.True(t, imported(c2, "demo", "api"))
	require.True(t, imported(c1, "demo", "web"))

	var svc corev1.Service
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "api"}, &svc))
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "grpc", Port: 9090, Protocol: corev1.ProtocolTCP})
	require.NoError(t, c1.Client.Update(ctx, &svc))
	rw.sync()
	branch := layout.ProposalBranch("service/demo/api")
	number := numberOf(t, rw.pulls("open"), branch)

	// The forge is polled on every cycle now. Churn in files the proposal
	// does not change (web's, in cluster-2) leaves it where it is: the
	// forge merges it cleanly as it is, and pushing it again would cost a
	// push per commit.
	rw.loop.Review.Poll = 0
	proposed, _ := rw.branchCommit(branch)
	var sl discoveryv1.EndpointSlice
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web-cluster-2"}, &sl))
	sl.Endpoints = tenant.Ready("10.2.0.11")
	require.NoError(t, c2.Client.Update(ctx, &sl))
	require.True(t, rw.sync().Committed)
	again, _ := rw.branchCommit(branch)
	assert.Equal(t, proposed, again, "churn elsewhere does not rebuild the proposal")
	// Churn in a file it changes too (api's endpoints are in cluster-1's
	// inputs, next to the new port) rebuilds it on the branch at the poll.
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "api-cluster-1"}, &sl))
	sl.Endpoints = tenant.Ready("10.1.0.10", "10.1.0.20")
	require.NoError(t, c1.Client.Update(ctx, &sl))
	out := rw.sync()
	require.True(t, out.Committed)
	again, parent := rw.branchCommit(branch)
	assert.NotEqual(t, proposed, again, "rebuilt")
	assert.Equal(t, out.Commit.String(), parent, "on the branch's new commit")

	// From now on the forge is not polled, so nothing rebases the proposal.
	rw.loop.Review.Poll = time.Hour
	for i, addr := range []string{"10.1.0.11", "10.1.0.12", "10.1.0.13"} {
		var sl discoveryv1.EndpointSlice
		require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "api-cluster-1"}, &sl))
		sl.Endpoints = tenant.Ready("10.1.0.10", addr)
		require.NoError(t, c1.Client.Update(ctx, &sl))
		out := rw.sync()
		require.True(t, out.Committed, "churn %d committed", i)
	}
	assert.ElementsMatch(t, []string{"10.1.0.10", "10.1.0.13"}, importedAddresses(t, c2, "demo", "api"))
	assert.Len(t, rw.pulls("open"), 1)

	rw.srv.Merge(t, rw.alice.Token, "fleet", number) // fails the test if Gitea finds a conflict
	rw.loop.Review.Poll = 0
	rw.sync()
	var si mcsv1alpha1.ServiceImport
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "api"}, &si))
	var ports []int32
	for _, p := range si.Spec.Ports {
		ports = append(ports, p.Port)
	}
	assert.ElementsMatch(t, []int32{8080, 9090}, ports, "the merged port is applied")
	assert.ElementsMatch(t, []string{"10.1.0.10", "10.1.0.13"}, importedAddresses(t, c2, "demo", "api"), "with the churn")
}

// TestReviewRefusesATamperedRecord: status/review.yaml is read from the
// branch, which people push to, and the loop deletes the branch and
// closes the request of a proposal whose change went away. A record
// edited to name another branch (a release branch) must make the cycle
// fail and name the file, not delete that branch; once the record is
// mended the loop goes on where it was.
func TestReviewRefusesATamperedRecord(t *testing.T) {
	rw := newReviewWorld(t, "")
	c1 := rw.member("cluster-1")
	rw.start()
	export(t, c1, "demo", "web", 80, "10.1.0.10")
	rw.sync()
	proposal := layout.ProposalBranch("service/demo/web")
	number := numberOf(t, rw.pulls("open"), proposal)

	release := rw.pushAs(rw.alice.Token, "main", "release", "a release", nil) // a branch of the team's
	good := "branch: " + proposal + "\n"
	tampered := rw.editReview(rw.alice.Token, func(record string) string {
		require.Contains(t, record, good)
		return strings.Replace(record, good, "branch: release\n", 1)
	})
	unexport(t, c1, "demo", "web") // the change goes away: the proposal would be withdrawn

	_, err := rw.loop.Sync(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), layout.ReviewFile)
	assert.Contains(t, err.Error(), `branch "release" is not proposal "service/demo/web"'s branch`)
	head, _ := rw.branchCommit("release")
	assert.Equal(t, release.String(), head, "the release branch is untouched")
	assert.Equal(t, number, numberOf(t, rw.pulls("open"), proposal), "the request is not closed on a tampered record's word")

	rw.editReview(rw.alice.Token, func(record string) string {
		return strings.Replace(record, "branch: release\n", good, 1)
	})
	rw.sync()
	assert.Empty(t, rw.pulls("open"), "mended, the withdrawn proposal is closed")
	head, _ = rw.branchCommit("release")
	assert.Equal(t, release.String(), head)
	assert.NotEqual(t, tampered.String(), rw.remoteMain(), "the loop committed on top")
}

// TestReviewRefusesAnUnsignedRecordEdit: with spec.git.verify on, the
// tampered record of TestReviewRefusesATamperedRecord is refused before it
// is read: the person's commit is not signed, so the cycle ends at
// verification, names that commit, and neither touches the proposal's
// request nor any branch. Once an administrator resets main to the
// loop's last signed commit, the loop goes on from there.
func TestReviewRefusesAnUnsignedRecordEdit(t *testing.T) {
	// The loop's key, made here: never a fixture.
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "loop.key")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600))
	pub, err := ssh.NewPublicKey(priv.Public())
	require.NoError(t, err)
	gitYAML := fmt.Sprintf("  git:\n    signing:\n      format: ssh\n      key: {path: %s}\n    verify:\n      keys:\n      - name: loop\n        ssh: %s\n",
		keyFile, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))))
	rw := newGiteaWorld(t, true, gitYAML, "")
	// Gitea made the repository's first commit, unsigned: verification is
	// turned on over it, as docs/signing.md says.
	data, err := os.ReadFile(rw.config)
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data), "    verify:\n", "    verify:\n      trustedBefore: "+rw.remoteMain()+"\n", 1))
	require.NoError(t, os.WriteFile(rw.config, data, 0o644))
	rw.loop = rw.newLoop(filepath.Join(t.TempDir(), "clone"))
	c1 := rw.member("cluster-1")
	rw.start()
	export(t, c1, "demo", "web", 80, "10.1.0.10")
	rw.sync()
	proposal := layout.ProposalBranch("service/demo/web")
	number := numberOf(t, rw.pulls("open"), proposal)
	signed := rw.remoteMain()

	release := rw.pushAs(rw.alice.Token, "main", "release", "a release", nil)
	tampered := rw.editReview(rw.alice.Token, func(record string) string {
		return strings.Replace(record, "branch: "+proposal+"\n", "branch: release\n", 1)
	})
	unexport(t, c1, "demo", "web")

	_, err = rw.loop.Sync(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "commit "+tampered.String()[:12]+` (alice <alice@example.com>, "edit the review record") is not signed`)
	assert.NotContains(t, err.Error(), layout.ReviewFile, "refused before the record is read")
	head, _ := rw.branchCommit("release")
	assert.Equal(t, release.String(), head, "the release branch is untouched")
	assert.Equal(t, number, numberOf(t, rw.pulls("open"), proposal), "the request is not closed")
	assert.Equal(t, tampered.String(), rw.remoteMain(), "nothing is committed on top of the refused commit")

	rw.forcePush(signed, "main")
	rw.sync()
	assert.Empty(t, rw.pulls("open"), "from the signed commit, the withdrawn proposal is closed")
	head, _ = rw.branchCommit("release")
	assert.Equal(t, release.String(), head)
	assert.NotEqual(t, signed, rw.remoteMain(), "the loop committed on top")
}

// forcePush moves target on Gitea to commit, as an administrator would.
func (rw *reviewWorld) forcePush(commit, target string) {
	t := rw.t
	t.Helper()
	auth := &githttp.BasicAuth{Username: "git", Password: rw.srv.Token}
	repo, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{URL: rw.clone, Auth: auth, NoCheckout: true})
	require.NoError(t, err)
	require.NoError(t, repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/reset", plumbing.NewHash(commit))))
	require.NoError(t, repo.Push(&git.PushOptions{Auth: auth, RefSpecs: []config.RefSpec{
		config.RefSpec("+refs/heads/reset:refs/heads/" + target),
	}}))
}

// remoteMain is the commit main is at on Gitea.
func (rw *reviewWorld) remoteMain() string {
	rw.t.Helper()
	c, _ := rw.branchHead("main")
	return c
}

// TestReviewWithAMemberThatRefuses: cluster-2 refuses catalog's derived
// Service (an admission policy). Merged, catalog's change is applied
// everywhere else and the refusal is a member problem naming the object;
// meanwhile cart's proposal keeps waiting, churn keeps landing, and
// cart's merge is applied in cluster-2 too: one refused object holds up
// neither review nor the member. Allowed again, the Service is applied.
func TestReviewWithAMemberThatRefuses(t *testing.T) {
	rw := newReviewWorld(t, "")
	ctx := context.Background()
	c1, c2, c3 := rw.member("cluster-1"), rw.member("cluster-2"), rw.member("cluster-3")
	rw.start()
	denied := render.DerivedServiceName("demo", "catalog")
	const why = "tenant quota: no more Services in demo"
	allow, err := envtest.DenyService(ctx, c2.Client, "demo", denied, why)
	require.NoError(t, err)

	export(t, c1, "demo", "catalog", 80, "10.1.0.10")
	export(t, c1, "demo", "cart", 80, "10.1.0.20")
	rw.sync() // nothing of either is applied yet: nothing to refuse
	require.Len(t, rw.pulls("open"), 2)

	rw.srv.Merge(t, rw.alice.Token, "fleet", numberOf(t, rw.pulls("open"), layout.ProposalBranch("service/demo/catalog")))
	refused := func() {
		t.Helper()
		err := rw.syncRefused()
		assert.Contains(t, err.Error(), "cluster-2: not applied: Service/demo/"+denied)
		assert.Contains(t, err.Error(), why)
	}
	refused()
	assert.True(t, imported(c2, "demo", "catalog"), "catalog's ServiceImport is applied in cluster-2")
	assert.False(t, exists(c2.Client, &corev1.Service{}, "demo", denied))
	assert.True(t, exists(c3.Client, &corev1.Service{}, "demo", denied), "and all of it in cluster-3")
	status, _, msg := exportCondition(t, c1, "demo", "catalog", "Ready")
	assert.Equal(t, "False", status)
	assert.Contains(t, msg, "cluster-2 did not take Service/demo/"+denied)
	_, reason, _ := exportCondition(t, c1, "demo", "cart", propose.ConditionPendingReview)
	assert.Equal(t, propose.ReasonProposalOpen, reason, "cart still waits, and says so")
	assert.False(t, imported(c2, "demo", "cart"))
	st := rw.reviewState()
	require.Len(t, st.Proposals, 1)
	assert.Equal(t, "service/demo/cart", st.Proposals[0].Name)

	// Churn lands while the member refuses and cart waits.
	var sl discoveryv1.EndpointSlice
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "catalog-cluster-1"}, &sl))
	sl.Endpoints = tenant.Ready("10.1.0.10", "10.1.0.11")
	require.NoError(t, c1.Client.Update(ctx, &sl))
	refused()
	assert.ElementsMatch(t, []string{"10.1.0.10", "10.1.0.11"}, importedAddresses(t, c2, "demo", "catalog"))
	assert.ElementsMatch(t, []string{"10.1.0.10", "10.1.0.11"}, importedAddresses(t, c3, "demo", "catalog"))

	rw.srv.Merge(t, rw.alice.Token, "fleet", numberOf(t, rw.pulls("open"), layout.ProposalBranch("service/demo/cart")))
	refused()
	assert.True(t, exists(c2.Client, &corev1.Service{}, "demo", render.DerivedServiceName("demo", "cart")), "cart's merge is applied in the refusing member")
	assert.Empty(t, rw.pulls("open"))
	status, _, _ = exportCondition(t, c1, "demo", "cart", "Ready")
	assert.Equal(t, "True", status)

	require.NoError(t, allow(ctx))
	rw.sync()
	assert.True(t, exists(c2.Client, &corev1.Service{}, "demo", denied), "applied once allowed")
	status, _, _ = exportCondition(t, c1, "demo", "catalog", "Ready")
	assert.Equal(t, "True", status)
}

// syncRefused runs cycles as sync does until one asks for no other, which
// must end in a member problem; a cycle before it (the one that sees a
// merge at its poll) may end in none, never in a failure.
func (rw *reviewWorld) syncRefused() error {
	rw.t.Helper()
	for range 5 {
		out, err := rw.loop.Sync(context.Background())
		var partial *reconcile.PartialError
		require.True(rw.t, err == nil || errors.As(err, &partial), "a member problem is not a failure: %v", err)
		if !out.Again {
			require.Error(rw.t, err, "cluster-2 refuses an object: the cycle must say so")
			return err
		}
	}
	rw.t.Fatalf("the loop still asks for another cycle after 5")
	return nil
}

// TestReviewLongNames: a tenant's names may be 63 characters each, and a
// request title made of them outgrows what a forge takes (255 on Gitea
// and GitLab, 256 on GitHub). The proposal must still be opened, its
// title cut to fit, the full names in its body, and merged like any
// other.
func TestReviewLongNames(t *testing.T) {
	rw := newReviewWorld(t, "")
	c1, c2 := rw.member("cluster-1"), rw.member("cluster-2")
	ns := "team-" + strings.Repeat("n", 58)
	name := "svc-" + strings.Repeat("s", 59)
	require.Len(t, ns, 63)
	require.Len(t, name, 63)
	for _, m := range rw.members {
		require.NoError(t, envtest.EnsureNamespaces(context.Background(), m.Client, ns))
	}
	rw.sync()
	// What the forge keeps must be what the loop sent, or the loop edits
	// the request again at every commit it makes.
	writes := rw.countForgeWrites()
	export(t, c1, ns, name, 80, "10.1.0.10")
	rw.sync()
	branch := layout.ProposalBranch("service/" + ns + "/" + name)
	open := rw.pulls("open")
	require.Len(t, open, 1)
	pr := open[0]
	assert.Equal(t, branch, pr.Head.Ref)
	assert.LessOrEqual(t, len([]rune(pr.Title)), 255)
	assert.Contains(t, pr.Title, ns)
	assert.Contains(t, pr.Body, "cluster-1 exports "+ns+"/"+name)
	_, reason, _ := exportCondition(t, c1, ns, name, propose.ConditionPendingReview)
	assert.Equal(t, propose.ReasonProposalOpen, reason)
	assert.Equal(t, int32(1), writes.opens.Load())
	assert.Zero(t, writes.updates.Load(), "the request is not edited after it is opened")

	rw.srv.Merge(t, rw.alice.Token, "fleet", pr.Number)
	rw.sync()
	assert.True(t, imported(c2, ns, name))
	assert.Empty(t, rw.pulls("open"))
}

// forgeWrites counts the requests the loop opens and edits on the forge.
type forgeWrites struct {
	forge.Client
	opens, updates atomic.Int32
}

func (f *forgeWrites) Open(ctx context.Context, c forge.Change) (*forge.Request, error) {
	f.opens.Add(1)
	return f.Client.Open(ctx, c)
}

func (f *forgeWrites) Update(ctx context.Context, number int, c forge.Change) (*forge.Request, error) {
	f.updates.Add(1)
	return f.Client.Update(ctx, number, c)
}

// countForgeWrites makes the loop's forge client count its writes from
// now on.
func (rw *reviewWorld) countForgeWrites() *forgeWrites {
	f := &forgeWrites{Client: rw.loop.Review.Forge}
	rw.loop.Review.Forge = f
	return f
}

// TestReviewHeadlessManyPorts: a tenant's headless Service with 20 ports,
// exported by two members, goes through review like any other: one
// proposal, nothing imported before the merge, a Headless import with
// every port after it, and its endpoints' churn lands at once.
func TestReviewHeadlessManyPorts(t *testing.T) {
	rw := newReviewWorld(t, "")
	ctx := context.Background()
	c1, c2, c3 := rw.member("cluster-1"), rw.member("cluster-2"), rw.member("cluster-3")
	rw.start()
	var ports []corev1.ServicePort
	for i := range 20 {
		ports = append(ports, tenant.Port(fmt.Sprintf("p%02d", i), int32(7000+i), int32(7000+i)))
	}
	for i, m := range []*envtest.Cluster{c1, c3} {
		svc := tenant.Headless("demo", "db", ports...)
		tenant.Create(t, m.Client, svc,
			tenant.Slice(svc, "db-"+m.Name, discoveryv1.AddressTypeIPv4, tenant.Ready(fmt.Sprintf("10.%d.0.10", i+1))...),
			tenant.Export("demo", "db"))
	}
	rw.sync()
	open := rw.pulls("open")
	require.Len(t, open, 1)
	assert.Equal(t, layout.ProposalBranch("service/demo/db"), open[0].Head.Ref)
	assert.False(t, imported(c2, "demo", "db"))

	rw.srv.Merge(t, rw.alice.Token, "fleet", open[0].Number)
	rw.sync()
	var si mcsv1alpha1.ServiceImport
	require.NoError(t, c2.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "db"}, &si))
	assert.Equal(t, mcsv1alpha1.Headless, si.Spec.Type)
	assert.Len(t, si.Spec.Ports, 20)
	assert.ElementsMatch(t, []string{"10.1.0.10", "10.2.0.10"}, importedAddresses(t, c2, "demo", "db"))

	var sl discoveryv1.EndpointSlice
	require.NoError(t, c1.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "db-cluster-1"}, &sl))
	sl.Endpoints = tenant.Ready("10.1.0.10", "10.1.0.11")
	require.NoError(t, c1.Client.Update(ctx, &sl))
	rw.sync()
	assert.ElementsMatch(t, []string{"10.1.0.10", "10.1.0.11", "10.2.0.10"}, importedAddresses(t, c2, "demo", "db"), "churn lands without review")
	assert.Empty(t, rw.pulls("open"))
}
