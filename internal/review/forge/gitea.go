// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"code.gitea.io/sdk/gitea"
	giteaprovider "github.com/fluxcd/go-git-providers/gitea"
	"github.com/fluxcd/go-git-providers/gitprovider"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// pageSize is what list calls ask for; servers may answer with fewer.
const pageSize = 50

// giteaClient speaks to a Gitea through its SDK. The SDK holds one context
// per client instead of taking one per call, so calls are serialized and
// each sets its own.
type giteaClient struct {
	mu          sync.Mutex
	c           *gitea.Client
	owner, name string
	sc          sdkErrors
}

func newGitea(f v1alpha1.ForgeOptions, repo, token string, sc sdkErrors) (Client, error) {
	owner, name, err := splitRepo(repo)
	if err != nil {
		return nil, err
	}
	if f.URL == "" {
		return nil, fmt.Errorf("forge: spec.review.forge.url is required for gitea")
	}
	u, err := baseURL(f.URL)
	if err != nil {
		return nil, err
	}
	// The SDK asks the server its version here and reports a refusal
	// without the status, which the transport keeps for the error.
	rec := &statusRecorder{}
	gp, err := giteaprovider.NewClient(token,
		gitprovider.WithDomain(u.String()),
		gitprovider.WithPostChainTransportHook(func(http.RoundTripper) http.RoundTripper {
			rec.base = withTimeout(nil)
			return rec
		}))
	if err != nil {
		// go-git-providers' message repeats the URL.
		msg := strings.TrimPrefix(err.Error(), "failed to create Gitea client for "+u.String()+": ")
		return nil, sc.wrap("forge: connecting to gitea at "+u.String(), int(rec.last.Load()), errors.New(msg))
	}
	c, ok := gp.Raw().(*gitea.Client)
	if !ok {
		return nil, fmt.Errorf("forge: go-git-providers' gitea client wraps %T, not *gitea.Client", gp.Raw())
	}
	return &giteaClient{c: c, owner: owner, name: name, sc: sc}, nil
}

// do runs one SDK call under ctx and wraps its error for op.
func (g *giteaClient) do(ctx context.Context, op string, call func() (*gitea.Response, error)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.c.SetContext(ctx)
	defer g.c.SetContext(context.Background())
	resp, err := call()
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	return g.sc.wrap(op, status, err)
}

func (g *giteaClient) Find(ctx context.Context, branch string) (*Request, error) {
	// Gitea cannot filter by head branch; its default order is newest
	// first, so the first match is the newest.
	for page := 1; ; page++ {
		var prs []*gitea.PullRequest
		err := g.do(ctx, "forge: listing pull requests of "+g.repo(), func() (r *gitea.Response, err error) {
			prs, r, err = g.c.ListRepoPullRequests(g.owner, g.name, gitea.ListPullRequestsOptions{
				ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize},
				State:       gitea.StateAll,
			})
			return r, err
		})
		if err != nil {
			return nil, err
		}
		if len(prs) == 0 {
			return nil, nil
		}
		for _, pr := range prs {
			// A fork's branch of the same name is someone else's.
			if pr.Head != nil && pr.Base != nil && pr.Head.Ref == branch && pr.Head.RepoID == pr.Base.RepoID {
				return giteaRequest(pr), nil
			}
		}
	}
}

func (g *giteaClient) Open(ctx context.Context, c Change) (*Request, error) {
	ids, err := g.labelIDs(ctx, c.Labels)
	if err != nil {
		return nil, err
	}
	var pr *gitea.PullRequest
	err = g.do(ctx, fmt.Sprintf("forge: opening a pull request from %s into %s in %s", c.Branch, c.Base, g.repo()), func() (r *gitea.Response, err error) {
		pr, r, err = g.c.CreatePullRequest(g.owner, g.name, gitea.CreatePullRequestOption{
			Head: c.Branch, Base: c.Base, Title: c.Title, Body: c.Body, Labels: ids,
		})
		return r, err
	})
	if err != nil {
		return nil, err
	}
	if pr == nil {
		return nil, errNoRequest
	}
	return giteaRequest(pr), nil
}

func (g *giteaClient) Update(ctx context.Context, number int, c Change) (*Request, error) {
	op := fmt.Sprintf("forge: updating pull request %s#%d", g.repo(), number)
	if c.Labels != nil {
		ids, err := g.labelIDs(ctx, c.Labels)
		if err != nil {
			return nil, err
		}
		err = g.do(ctx, op, func() (r *gitea.Response, err error) {
			_, r, err = g.c.ReplaceIssueLabels(g.owner, g.name, int64(number), gitea.IssueLabelsOption{Labels: ids})
			return r, err
		})
		if err != nil {
			return nil, err
		}
	}
	var pr *gitea.PullRequest
	err := g.do(ctx, op, func() (r *gitea.Response, err error) {
		pr, r, err = g.c.EditPullRequest(g.owner, g.name, int64(number), gitea.EditPullRequestOption{Title: c.Title, Body: &c.Body})
		return r, err
	})
	if err != nil {
		return nil, err
	}
	if pr == nil {
		return nil, errNoRequest
	}
	return giteaRequest(pr), nil
}

func (g *giteaClient) Close(ctx context.Context, number int, comment string) error {
	r, err := g.Get(ctx, number)
	if err != nil || r.State != Open {
		return err
	}
	op := fmt.Sprintf("forge: closing pull request %s#%d", g.repo(), number)
	if comment != "" {
		err := g.do(ctx, op, func() (r *gitea.Response, err error) {
			_, r, err = g.c.CreateIssueComment(g.owner, g.name, int64(number), gitea.CreateIssueCommentOption{Body: comment})
			return r, err
		})
		if err != nil {
			return err
		}
	}
	closed := gitea.StateClosed
	return g.do(ctx, op, func() (r *gitea.Response, err error) {
		_, r, err = g.c.EditPullRequest(g.owner, g.name, int64(number), gitea.EditPullRequestOption{State: &closed})
		return r, err
	})
}

func (g *giteaClient) Get(ctx context.Context, number int) (*Request, error) {
	var pr *gitea.PullRequest
	err := g.do(ctx, fmt.Sprintf("forge: reading pull request %s#%d", g.repo(), number), func() (r *gitea.Response, err error) {
		pr, r, err = g.c.GetPullRequest(g.owner, g.name, int64(number))
		return r, err
	})
	if err != nil {
		return nil, err
	}
	if pr == nil {
		return nil, errNoRequest
	}
	return giteaRequest(pr), nil
}

// labelIDs returns the IDs of the named labels, creating the missing ones.
func (g *giteaClient) labelIDs(ctx context.Context, names []string) ([]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	have := map[string]int64{}
	op := "forge: listing the labels of " + g.repo()
	for page := 1; ; page++ {
		var labels []*gitea.Label
		err := g.do(ctx, op, func() (r *gitea.Response, err error) {
			labels, r, err = g.c.ListRepoLabels(g.owner, g.name, gitea.ListLabelsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize}})
			return r, err
		})
		if err != nil {
			return nil, err
		}
		if len(labels) == 0 {
			break
		}
		for _, l := range labels {
			have[l.Name] = l.ID
		}
	}
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		id, ok := have[n]
		if !ok {
			var l *gitea.Label
			err := g.do(ctx, fmt.Sprintf("forge: creating label %q in %s", n, g.repo()), func() (r *gitea.Response, err error) {
				l, r, err = g.c.CreateLabel(g.owner, g.name, gitea.CreateLabelOption{Name: n, Color: "#" + labelColor})
				return r, err
			})
			if err != nil {
				return nil, err
			}
			id = l.ID
			have[n] = id
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (g *giteaClient) repo() string { return g.owner + "/" + g.name }

// giteaRequest maps Gitea's pull request.
func giteaRequest(pr *gitea.PullRequest) *Request {
	r := &Request{Number: int(pr.Index), URL: pr.HTMLURL, Title: pr.Title, Body: pr.Body}
	switch {
	case pr.HasMerged:
		r.State = Merged
	case pr.State == gitea.StateClosed:
		r.State = Closed
	default:
		r.State = Open
	}
	if pr.Head != nil {
		r.Branch, r.HeadSHA = pr.Head.Ref, pr.Head.Sha
	}
	if pr.Base != nil {
		r.Base = pr.Base.Ref
	}
	if r.State == Merged && pr.MergedCommitID != nil {
		r.MergeCommitSHA = *pr.MergedCommitID
	}
	for _, l := range pr.Labels {
		r.Labels = append(r.Labels, l.Name)
	}
	slices.Sort(r.Labels)
	return r
}
