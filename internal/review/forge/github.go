// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/bradleyfalzon/ghinstallation/v2"
	githubprovider "github.com/fluxcd/go-git-providers/github"
	"github.com/fluxcd/go-git-providers/gitprovider"
	"github.com/google/go-github/v87/github"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// githubClient speaks to github.com or a GitHub Enterprise Server.
type githubClient struct {
	c           *github.Client
	owner, name string
	sc          sdkErrors
}

// githubEndpoints returns the go-git-providers domain for a configured
// URL ("" for github.com) and the REST API base an App's token exchange
// needs.
func githubEndpoints(raw string) (domain, apiBase string, err error) {
	if raw == "" {
		return "", "https://api.github.com", nil
	}
	u, err := baseURL(raw)
	if err != nil {
		return "", "", err
	}
	if u.Scheme != "https" || u.Path != "" {
		// go-git-providers reaches GitHub Enterprise at https://host/api/v3/.
		return "", "", fmt.Errorf("forge: spec.review.forge.url %q: GitHub (Enterprise) is reached at https://host", u.String())
	}
	if strings.EqualFold(u.Host, githubprovider.DefaultDomain) || strings.EqualFold(u.Host, "api.github.com") {
		return "", "https://api.github.com", nil
	}
	return u.Host, "https://" + u.Host + "/api/v3", nil
}

func newGitHub(f v1alpha1.ForgeOptions, repo, token string, sc sdkErrors, read func(*v1alpha1.CredentialSource) ([]byte, error)) (Client, error) {
	owner, name, err := splitRepo(repo)
	if err != nil {
		return nil, err
	}
	if strings.Contains(owner, "/") {
		return nil, fmt.Errorf("forge: repository %q: GitHub repositories are owner/name", repo)
	}
	domain, apiBase, err := githubEndpoints(f.URL)
	if err != nil {
		return nil, err
	}
	var opts []gitprovider.ClientOption
	if domain != "" {
		opts = append(opts, gitprovider.WithDomain(domain))
	}
	if app := f.GitHubApp; app != nil {
		key, err := readSecret(read, app.PrivateKey, "githubApp.privateKey")
		if err != nil {
			return nil, err
		}
		// ghinstallation signs a JWT with the App's key, exchanges it for
		// an installation token and renews that before it expires.
		tr, err := ghinstallation.New(withTimeout(nil), app.AppID, app.InstallationID, key)
		if err != nil {
			// The parser's message is about the key's format; do not
			// pass on anything that might quote it.
			return nil, fmt.Errorf("forge: the githubApp.privateKey from %s is not a PEM RSA private key", app.PrivateKey.Describe())
		}
		tr.BaseURL = apiBase
		sc = sdkErrors{credential: fmt.Sprintf("GitHub App %d installation %d (key from %s)", app.AppID, app.InstallationID, app.PrivateKey.Describe())}
		opts = append(opts, gitprovider.WithPostChainTransportHook(func(http.RoundTripper) http.RoundTripper { return tr }))
	} else {
		opts = append(opts, gitprovider.WithOAuth2Token(token), gitprovider.WithPostChainTransportHook(withTimeout))
	}
	gp, err := githubprovider.NewClient(opts...)
	if err != nil {
		return nil, sc.wrap("forge: github client", 0, err)
	}
	c, ok := gp.Raw().(*github.Client)
	if !ok {
		return nil, fmt.Errorf("forge: go-git-providers' github client wraps %T, not *github.Client", gp.Raw())
	}
	return &githubClient{c: c, owner: owner, name: name, sc: sc}, nil
}

func (g *githubClient) wrap(op string, resp *github.Response, err error) error {
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	return g.sc.wrap(op, status, err)
}

func (g *githubClient) Find(ctx context.Context, branch string) (*Request, error) {
	// head=owner:branch keeps forks out; newest first.
	prs, resp, err := g.c.PullRequests.List(ctx, g.owner, g.name, &github.PullRequestListOptions{
		State: "all", Head: g.owner + ":" + branch, Sort: "created", Direction: "desc",
		ListOptions: github.ListOptions{PerPage: 10},
	})
	if err != nil {
		return nil, g.wrap("forge: listing pull requests of "+g.repo(), resp, err)
	}
	for _, pr := range prs {
		if pr.GetHead().GetRef() == branch && strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), g.repo()) {
			return githubRequest(pr), nil
		}
	}
	return nil, nil
}

func (g *githubClient) Open(ctx context.Context, c Change) (*Request, error) {
	op := fmt.Sprintf("forge: opening a pull request from %s into %s in %s", c.Branch, c.Base, g.repo())
	pr, resp, err := g.c.PullRequests.Create(ctx, g.owner, g.name, &github.NewPullRequest{
		Title: &c.Title, Head: &c.Branch, Base: &c.Base, Body: &c.Body,
	})
	if err != nil {
		return nil, g.wrap(op, resp, err)
	}
	if pr == nil {
		return nil, errNoRequest
	}
	if len(c.Labels) > 0 {
		labels, err := g.setLabels(ctx, pr.GetNumber(), c.Labels)
		if err != nil {
			return nil, fmt.Errorf("%s: opened #%d, then: %w", op, pr.GetNumber(), err)
		}
		pr.Labels = labels
	}
	return githubRequest(pr), nil
}

func (g *githubClient) Update(ctx context.Context, number int, c Change) (*Request, error) {
	op := fmt.Sprintf("forge: updating pull request %s#%d", g.repo(), number)
	edit := &github.PullRequest{Body: &c.Body}
	if c.Title != "" {
		edit.Title = &c.Title
	}
	pr, resp, err := g.c.PullRequests.Edit(ctx, g.owner, g.name, number, edit)
	if err != nil {
		return nil, g.wrap(op, resp, err)
	}
	if pr == nil {
		return nil, errNoRequest
	}
	if c.Labels != nil {
		labels, err := g.setLabels(ctx, number, c.Labels)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		pr.Labels = labels
	}
	return githubRequest(pr), nil
}

func (g *githubClient) Close(ctx context.Context, number int, comment string) error {
	r, err := g.Get(ctx, number)
	if err != nil || r.State != Open {
		return err
	}
	op := fmt.Sprintf("forge: closing pull request %s#%d", g.repo(), number)
	if comment != "" {
		if _, resp, err := g.c.Issues.CreateComment(ctx, g.owner, g.name, number, &github.IssueComment{Body: &comment}); err != nil {
			return g.wrap(op, resp, err)
		}
	}
	closed := "closed"
	_, resp, err := g.c.PullRequests.Edit(ctx, g.owner, g.name, number, &github.PullRequest{State: &closed})
	return g.wrap(op, resp, err)
}

func (g *githubClient) Get(ctx context.Context, number int) (*Request, error) {
	pr, resp, err := g.c.PullRequests.Get(ctx, g.owner, g.name, number)
	if err != nil {
		return nil, g.wrap(fmt.Sprintf("forge: reading pull request %s#%d", g.repo(), number), resp, err)
	}
	if pr == nil {
		return nil, errNoRequest
	}
	return githubRequest(pr), nil
}

// setLabels makes names the labels of the pull request, creating missing
// ones first: an issue's labels can only name labels that exist.
func (g *githubClient) setLabels(ctx context.Context, number int, names []string) ([]*github.Label, error) {
	for _, n := range names {
		// go-github puts the name into the path as it is; the loop's
		// labels hold a slash (review/Export), which would ask for
		// another path, always 404, and cost a refused create each time.
		_, resp, err := g.c.Issues.GetLabel(ctx, g.owner, g.name, url.PathEscape(n))
		if err == nil {
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusNotFound {
			return nil, g.wrap("reading label "+strconv.Quote(n), resp, err)
		}
		color := labelColor
		_, resp, err = g.c.Issues.CreateLabel(ctx, g.owner, g.name, &github.Label{Name: &n, Color: &color})
		// 422: created meanwhile by someone else.
		if err != nil && (resp == nil || resp.StatusCode != http.StatusUnprocessableEntity) {
			return nil, g.wrap("creating label "+strconv.Quote(n), resp, err)
		}
	}
	labels, resp, err := g.c.Issues.ReplaceLabelsForIssue(ctx, g.owner, g.name, number, names)
	if err != nil {
		return nil, g.wrap("setting labels", resp, err)
	}
	return labels, nil
}

func (g *githubClient) repo() string { return g.owner + "/" + g.name }

// githubRequest maps GitHub's pull request. A listed pull request carries
// merged_at but not merged; either says it was merged. GitHub fills
// merge_commit_sha for open ones too (a test merge), so it is kept only
// once merged.
func githubRequest(pr *github.PullRequest) *Request {
	r := &Request{
		Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Title: pr.GetTitle(), Body: pr.GetBody(),
		Branch: pr.GetHead().GetRef(), HeadSHA: pr.GetHead().GetSHA(), Base: pr.GetBase().GetRef(),
	}
	switch {
	case pr.GetMerged() || pr.MergedAt != nil:
		r.State = Merged
		r.MergeCommitSHA = pr.GetMergeCommitSHA()
	case pr.GetState() == "closed":
		r.State = Closed
	default:
		r.State = Open
	}
	for _, l := range pr.Labels {
		r.Labels = append(r.Labels, l.GetName())
	}
	slices.Sort(r.Labels)
	return r
}
