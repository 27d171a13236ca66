// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// defaultForgeHost is the host each provider uses when spec.review.forge.url
// is empty (Gitea has none: it is always self-hosted).
var defaultForgeHost = map[ForgeProvider]string{ForgeGitHub: "github.com", ForgeGitLab: "gitlab.com"}

// validate checks spec.review against itself and spec.git (p is
// "spec.review"). An empty, disabled review section is valid; anything set
// is checked even when disabled, so turning it on later finds no surprise.
func (r ReviewOptions) validate(p string, git GitOptions) ErrorList {
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	f := r.Forge
	fp := p + ".forge"
	for i, k := range r.Kinds {
		if !slices.Contains(ReviewKinds, k) {
			add(fmt.Sprintf("%s.kinds[%d]", p, i), "unknown kind %q: one of Member, Export, Withdrawal, Import, Conflict, Policy, Gateway", k)
		}
	}
	if _, err := r.PollInterval.Get(0); err != nil {
		add(p+".pollInterval", "%v", err)
	}
	if !r.Enabled && f == (ForgeOptions{}) {
		return errs
	}
	switch f.Provider {
	case ForgeGitHub, ForgeGitLab, ForgeGitea:
	case "":
		add(fp+".provider", "required: github, gitlab or gitea")
	default:
		add(fp+".provider", "must be github, gitlab or gitea, got %q", f.Provider)
	}
	if f.URL != "" {
		if msg := forgeURLProblem(f.URL); msg != "" {
			add(fp+".url", "%s", msg)
		}
	} else if f.Provider == ForgeGitea {
		add(fp+".url", "required for gitea: the server's https://host URL")
	} else if def, ok := defaultForgeHost[f.Provider]; ok {
		// Without a URL the requests would go to the public forge: say so
		// when the repository plainly lives elsewhere.
		if host, _, ok := splitRepoURL(git.URL); ok && !strings.EqualFold(host, def) {
			add(fp+".url", "required: spec.git.url is on %s, and without a url requests would go to %s", host, def)
		}
	}
	repo, err := f.RepositoryPath(git.URL)
	if err != nil {
		add(fp+".repository", "%v", err)
	} else if msg := repositoryProblem(f.Provider, repo); msg != "" {
		add(fp+".repository", "%q %s", repo, msg)
	}
	errs = append(errs, f.Token.validate(fp+".token")...)
	if a := f.GitHubApp; a != nil {
		ap := fp + ".githubApp"
		if f.Provider != ForgeGitHub && f.Provider != "" {
			add(ap, "applies to provider github only")
		}
		if f.Token != nil {
			add(fp, "set token or githubApp, not both")
		}
		if a.AppID <= 0 {
			add(ap+".appID", "required: the App's numeric ID")
		}
		if a.InstallationID <= 0 {
			add(ap+".installationID", "required: the ID of the App's installation on the repository's owner")
		}
		if a.PrivateKey == nil {
			add(ap+".privateKey", "required: where the App's PEM private key is read from")
		}
		errs = append(errs, a.PrivateKey.validate(ap+".privateKey")...)
	} else if f.Token == nil && r.Enabled {
		add(fp+".token", "required (or githubApp for GitHub): proposals are opened through the forge's API")
	}
	return errs
}

// forgeURLProblem says what is wrong with a forge URL, or "".
func forgeURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return fmt.Sprintf("%q is not an https://host URL", redact.URLs(raw))
	case u.User != nil:
		return "contains a user part; clusterset.yaml is committed to Git, so reference the token from spec.review.forge.token"
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Sprintf("scheme %q: use https://host", u.Scheme)
	case u.RawQuery != "" || u.Fragment != "":
		return "must not have a query or fragment"
	}
	return ""
}

// repositoryProblem says what is wrong with an owner/name path, or "".
func repositoryProblem(p ForgeProvider, repo string) string {
	parts := strings.Split(repo, "/")
	for _, s := range parts {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, " \t\n\r?#%\\:") {
			return "is not an owner/name path"
		}
	}
	switch {
	case p == ForgeGitLab && len(parts) < 2:
		return "is not a group/name path"
	case p != ForgeGitLab && len(parts) != 2:
		return "is not an owner/name path (only GitLab has subgroups)"
	}
	return ""
}
