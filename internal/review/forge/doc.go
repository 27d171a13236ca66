// SPDX-License-Identifier: Apache-2.0

// Package forge opens and tracks review-mode proposals on the forge that
// hosts the rendered repository: pull requests on GitHub and Gitea, merge
// requests on GitLab. A proposal is a branch the loop has already pushed;
// this package opens the request for it, keeps its title, body and labels
// current, reads whether a person merged it (the approval) or closed it
// unmerged (the rejection), and closes it when the loop withdraws it.
//
// Clients are built with github.com/fluxcd/go-git-providers (token and
// GitHub App auth, GitHub Enterprise and self-hosted URLs, one transport
// chain with a per-request timeout); the requests themselves go through
// the SDK each provider's client wraps (Raw), because the provider-neutral
// pull request type has no state, head, labels or close, and using it
// would cost a repository lookup first. What each forge needs is in its
// own file: github.go, gitlab.go, gitea.go.
//
// It must not touch Git (the loop pushes the branch), render anything, or
// decide what is proposed. It never puts a credential in an error: tokens
// and URL passwords are redacted from whatever an SDK returns.
package forge
