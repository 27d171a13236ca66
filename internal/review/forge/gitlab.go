// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"context"
	"fmt"
	"slices"
	"strings"

	gitlabprovider "github.com/fluxcd/go-git-providers/gitlab"
	"github.com/fluxcd/go-git-providers/gitprovider"
	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// gitlabClient speaks to gitlab.com or a self-managed GitLab. The project
// is addressed by its path (group/subgroup/name), which the API accepts
// in place of the numeric ID.
type gitlabClient struct {
	c       *gitlab.Client
	project string
	sc      sdkErrors
}

// gitlabDomain returns the go-git-providers domain for a configured URL:
// "" for gitlab.com, else the scheme, host and any path prefix, to which
// the SDK appends /api/v4.
func gitlabDomain(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := baseURL(raw)
	if err != nil {
		return "", err
	}
	if u.Path == "" && strings.EqualFold(u.Host, gitlabprovider.DefaultDomain) {
		return "", nil
	}
	return u.String(), nil
}

func newGitLab(f v1alpha1.ForgeOptions, repo, token string, sc sdkErrors) (Client, error) {
	if _, _, err := splitRepo(repo); err != nil {
		return nil, err
	}
	domain, err := gitlabDomain(f.URL)
	if err != nil {
		return nil, err
	}
	opts := []gitprovider.ClientOption{gitprovider.WithPostChainTransportHook(withTimeout)}
	if domain != "" {
		opts = append(opts, gitprovider.WithDomain(domain))
	}
	// Token type "" sends the token as PRIVATE-TOKEN, which personal,
	// group and project access tokens all use.
	gp, err := gitlabprovider.NewClient(token, "", opts...)
	if err != nil {
		return nil, sc.wrap("forge: gitlab client", 0, err)
	}
	c, ok := gp.Raw().(*gitlab.Client)
	if !ok {
		return nil, fmt.Errorf("forge: go-git-providers' gitlab client wraps %T, not *gitlab.Client", gp.Raw())
	}
	return &gitlabClient{c: c, project: repo, sc: sc}, nil
}

func (g *gitlabClient) wrap(op string, resp *gitlab.Response, err error) error {
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	return g.sc.wrap(op, status, err)
}

func (g *gitlabClient) Find(ctx context.Context, branch string) (*Request, error) {
	mrs, resp, err := g.c.MergeRequests.ListProjectMergeRequests(g.project, &gitlab.ListProjectMergeRequestsOptions{
		SourceBranch: &branch, State: new("all"), OrderBy: new("created_at"), Sort: new("desc"),
		ListOptions: gitlab.ListOptions{PerPage: 20},
	}, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.wrap("forge: listing merge requests of "+g.project, resp, err)
	}
	for _, mr := range mrs {
		// A fork's branch of the same name is someone else's.
		if mr.SourceBranch == branch && mr.SourceProjectID == mr.TargetProjectID {
			return gitlabRequest(mr), nil
		}
	}
	return nil, nil
}

func (g *gitlabClient) Open(ctx context.Context, c Change) (*Request, error) {
	opt := &gitlab.CreateMergeRequestOptions{
		Title: &c.Title, Description: &c.Body, SourceBranch: &c.Branch, TargetBranch: &c.Base,
	}
	// GitLab creates the project labels a merge request names.
	if len(c.Labels) > 0 {
		opt.Labels = new(gitlab.LabelOptions(c.Labels))
	}
	mr, resp, err := g.c.MergeRequests.CreateMergeRequest(g.project, opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.wrap(fmt.Sprintf("forge: opening a merge request from %s into %s in %s", c.Branch, c.Base, g.project), resp, err)
	}
	if mr == nil {
		return nil, errNoRequest
	}
	return gitlabRequest(&mr.BasicMergeRequest), nil
}

func (g *gitlabClient) Update(ctx context.Context, number int, c Change) (*Request, error) {
	opt := &gitlab.UpdateMergeRequestOptions{Description: &c.Body}
	if c.Title != "" {
		opt.Title = &c.Title
	}
	if c.Labels != nil {
		opt.Labels = new(gitlab.LabelOptions(c.Labels))
	}
	mr, resp, err := g.c.MergeRequests.UpdateMergeRequest(g.project, int64(number), opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.wrap(fmt.Sprintf("forge: updating merge request %s!%d", g.project, number), resp, err)
	}
	if mr == nil {
		return nil, errNoRequest
	}
	return gitlabRequest(&mr.BasicMergeRequest), nil
}

func (g *gitlabClient) Close(ctx context.Context, number int, comment string) error {
	r, err := g.Get(ctx, number)
	if err != nil || r.State != Open {
		return err
	}
	op := fmt.Sprintf("forge: closing merge request %s!%d", g.project, number)
	if comment != "" {
		_, resp, err := g.c.Notes.CreateMergeRequestNote(g.project, int64(number), &gitlab.CreateMergeRequestNoteOptions{Body: &comment}, gitlab.WithContext(ctx))
		if err != nil {
			return g.wrap(op, resp, err)
		}
	}
	_, resp, err := g.c.MergeRequests.UpdateMergeRequest(g.project, int64(number),
		&gitlab.UpdateMergeRequestOptions{StateEvent: new("close")}, gitlab.WithContext(ctx))
	return g.wrap(op, resp, err)
}

func (g *gitlabClient) Get(ctx context.Context, number int) (*Request, error) {
	mr, resp, err := g.c.MergeRequests.GetMergeRequest(g.project, int64(number), nil, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.wrap(fmt.Sprintf("forge: reading merge request %s!%d", g.project, number), resp, err)
	}
	if mr == nil {
		return nil, errNoRequest
	}
	return gitlabRequest(&mr.BasicMergeRequest), nil
}

// gitlabRequest maps GitLab's merge request. "locked" is the short state
// while a merge is under way, still open; a squashed merge's commit is the
// squash commit when no merge commit was made.
func gitlabRequest(mr *gitlab.BasicMergeRequest) *Request {
	r := &Request{
		Number: int(mr.IID), URL: mr.WebURL, Title: mr.Title, Body: mr.Description,
		Branch: mr.SourceBranch, Base: mr.TargetBranch, HeadSHA: mr.SHA,
		Labels: slices.Sorted(slices.Values(mr.Labels)),
	}
	switch mr.State {
	case "merged":
		r.State = Merged
		r.MergeCommitSHA = mr.MergeCommitSHA
		if r.MergeCommitSHA == "" {
			r.MergeCommitSHA = mr.SquashCommitSHA
		}
	case "closed":
		r.State = Closed
	default:
		r.State = Open
	}
	return r
}
