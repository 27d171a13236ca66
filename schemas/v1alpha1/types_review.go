// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// spec.review: review mode, where structural changes go to a proposal
// branch and a pull or merge request on the forge instead of straight to
// the branch, and a merge is the approval.

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// ForgeProvider names the kind of forge proposals are opened on.
type ForgeProvider string

const (
	// ForgeGitHub is github.com or GitHub Enterprise Server: pull requests.
	ForgeGitHub ForgeProvider = "github"
	// ForgeGitLab is gitlab.com or a self-managed GitLab: merge requests.
	ForgeGitLab ForgeProvider = "gitlab"
	// ForgeGitea is a Gitea (or Forgejo) server: pull requests.
	ForgeGitea ForgeProvider = "gitea"
)

// ReviewOptions turn review mode on and say where proposals are opened.
type ReviewOptions struct {
	// Enabled turns review mode on: structural changes are committed to
	// a branch mcs-gitops/proposals/<name> and proposed as a pull or
	// merge request instead of being pushed to spec.git.branch.
	Enabled bool `json:"enabled,omitempty"`
	// Kinds are the kinds of structural change that wait for approval:
	// Member, Export, Withdrawal, Import, Conflict, Policy, Gateway.
	// Empty means all of them. A change of none of these kinds goes
	// straight to the branch, as churn always does.
	Kinds []ReviewKind `json:"kinds,omitempty" schema:"maxItems=7;itemEnum=Member|Export|Withdrawal|Import|Conflict|Policy|Gateway"`
	// PollInterval is how often the forge is asked about open proposals
	// and the branch fetched for their merges. Defaults to 30s.
	PollInterval Duration `json:"pollInterval,omitempty" schema:"pattern=^(0|([0-9]+(ns|us|ms|s|m|h))+)$;default=30s"`
	// Forge is the service the repository lives on, and the identity that
	// opens the requests there.
	Forge ForgeOptions `json:"forge,omitempty"`
}

// ReviewKind is a kind of structural change (docs/review-mode.md).
type ReviewKind string

// The kinds of structural change, in the order a proposal lists them.
const (
	// ReviewMember: a member whose snapshot the branch has never held.
	ReviewMember ReviewKind = "Member"
	// ReviewExport: a member exports a service, or changes what it
	// exports.
	ReviewExport ReviewKind = "Export"
	// ReviewWithdrawal: a member stops exporting a service.
	ReviewWithdrawal ReviewKind = "Withdrawal"
	// ReviewImport: a member gets a service's ServiceImport.
	ReviewImport ReviewKind = "Import"
	// ReviewConflict: a conflict appears or goes, or its winner changes.
	ReviewConflict ReviewKind = "Conflict"
	// ReviewPolicy: a GlobalTrafficPolicy, or whom it routes to.
	ReviewPolicy ReviewKind = "Policy"
	// ReviewGateway: a gateway's TCP port allocations.
	ReviewGateway ReviewKind = "Gateway"
)

// ReviewKinds are every kind, the default of spec.review.kinds.
var ReviewKinds = []ReviewKind{ReviewMember, ReviewExport, ReviewWithdrawal, ReviewImport, ReviewConflict, ReviewPolicy, ReviewGateway}

// ForgeOptions say which forge holds the repository and how to reach its
// API. They hold references to credentials, never the credentials.
type ForgeOptions struct {
	// Provider is the kind of forge: github, gitlab or gitea.
	Provider ForgeProvider `json:"provider,omitempty" schema:"enum=github|gitlab|gitea"`
	// URL of the forge, for GitHub Enterprise Server, a self-managed
	// GitLab or a Gitea: https://host (an /api/... suffix is allowed).
	// Defaults to github.com or gitlab.com; required for gitea.
	URL string `json:"url,omitempty" schema:"maxLength=2048"`
	// Repository on the forge: owner/name (GitLab: group/subgroup/name).
	// Defaults to the path of spec.git.url.
	Repository string `json:"repository,omitempty" schema:"maxLength=1024"`
	// Token is an API token allowed to open, edit and close pull or merge
	// requests and to create labels. Set token or githubApp.
	Token *CredentialSource `json:"token,omitempty"`
	// GitHubApp authenticates as a GitHub App installation instead of a
	// token (provider github only).
	GitHubApp *GitHubAppAuth `json:"githubApp,omitempty"`
}

// GitHubAppAuth is a GitHub App installed on the repository's owner.
type GitHubAppAuth struct {
	// AppID is the App's numeric ID (its settings page shows it).
	AppID int64 `json:"appID" schema:"minimum=1"`
	// InstallationID is the ID of the App's installation on the owner of
	// the repository.
	InstallationID int64 `json:"installationID" schema:"minimum=1"`
	// PrivateKey is the App's PEM private key.
	PrivateKey *CredentialSource `json:"privateKey"`
}

// RepositoryPath returns the forge repository f names: Repository when
// set, else the path of gitURL (https://host/owner/name.git,
// ssh://git@host/owner/name.git or git@host:owner/name.git) without the
// .git suffix. It fails when neither gives one.
func (f ForgeOptions) RepositoryPath(gitURL string) (string, error) {
	if f.Repository != "" {
		return strings.Trim(f.Repository, "/"), nil
	}
	_, p, ok := splitRepoURL(gitURL)
	if !ok || p == "" {
		return "", fmt.Errorf("cannot be derived from spec.git.url %q (not an https, ssh or user@host:path URL with a path); set it to owner/name", redact.URLs(gitURL))
	}
	return p, nil
}

// splitRepoURL returns the host and the repository path (no leading or
// trailing slash, no .git) of an https, ssh or scp-like Git URL.
func splitRepoURL(raw string) (host, repoPath string, ok bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "", false
	}
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", "", false
		}
		switch u.Scheme {
		case "http", "https", "ssh", "git":
		default:
			return "", "", false
		}
		host, repoPath = u.Hostname(), u.Path
	} else {
		// user@host:path or host:path; a path with a slash before the
		// colon is a local path.
		hostPart, p, found := strings.Cut(raw, ":")
		if !found || strings.Contains(hostPart, "/") || strings.HasPrefix(p, "//") {
			return "", "", false
		}
		if i := strings.LastIndex(hostPart, "@"); i >= 0 {
			hostPart = hostPart[i+1:]
		}
		host, repoPath = hostPart, p
	}
	repoPath = strings.TrimSuffix(strings.Trim(path.Clean("/"+repoPath), "/"), ".git")
	if host == "" || repoPath == "" || repoPath == "." {
		return "", "", false
	}
	return host, repoPath, true
}
