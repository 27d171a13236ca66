// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// New builds the client spec.review.forge describes, for the repository
// it names (or spec.git.url's path). Credentials are read through read
// (environment, file or management-cluster Secret: the caller decides how,
// as for gitsync.AuthFrom). For Gitea, New asks the server its version
// (the SDK does, to know which API it speaks), so it fails when the server
// cannot be reached; the others make no request until used.
func New(cs *v1alpha1.ClusterSet, read func(*v1alpha1.CredentialSource) ([]byte, error)) (Client, error) {
	f := cs.Spec.Review.Forge
	repo, err := f.RepositoryPath(cs.Spec.Git.URL)
	if err != nil {
		return nil, fmt.Errorf("forge: spec.review.forge.repository %w", err)
	}
	if f.GitHubApp != nil && f.Provider != v1alpha1.ForgeGitHub {
		return nil, fmt.Errorf("forge: spec.review.forge.githubApp applies to provider github only")
	}
	var token string
	var sc sdkErrors
	if f.GitHubApp == nil {
		if f.Token == nil {
			return nil, fmt.Errorf("forge: spec.review.forge.token is not set")
		}
		b, err := readSecret(read, f.Token, "token")
		if err != nil {
			return nil, err
		}
		token = strings.TrimSpace(string(b))
		sc = sdkErrors{redact: redact.New(token), credential: f.Token.Describe()}
	}
	switch f.Provider {
	case v1alpha1.ForgeGitHub:
		return newGitHub(f, repo, token, sc, read)
	case v1alpha1.ForgeGitLab:
		return newGitLab(f, repo, token, sc)
	case v1alpha1.ForgeGitea:
		return newGitea(f, repo, token, sc)
	}
	return nil, fmt.Errorf("forge: spec.review.forge.provider %q is not github, gitlab or gitea", f.Provider)
}

// splitRepo splits owner/name; GitLab's group/subgroup/name keeps the
// groups in owner.
func splitRepo(repo string) (owner, name string, err error) {
	i := strings.LastIndex(repo, "/")
	if i <= 0 || i == len(repo)-1 {
		return "", "", fmt.Errorf("forge: repository %q is not owner/name", repo)
	}
	return repo[:i], repo[i+1:], nil
}

// baseURL checks a configured forge URL and returns it without a trailing
// slash and without an API suffix the user may have copied (/api/v3,
// /api/v4, /api/v1), which the SDKs add themselves.
func baseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return nil, fmt.Errorf("forge: spec.review.forge.url %q is not an https://host URL", redact.URLs(raw))
	}
	p := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/api/v3", "/api/v4", "/api/v1"} {
		p = strings.TrimSuffix(p, suffix)
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = p, "", "", ""
	return u, nil
}

// readSecret is CredentialSource.Read with the package's error prefix.
func readSecret(read func(*v1alpha1.CredentialSource) ([]byte, error), src *v1alpha1.CredentialSource, field string) ([]byte, error) {
	b, err := src.Read(read, field)
	if err != nil {
		return nil, fmt.Errorf("forge: %w", err)
	}
	return b, nil
}
