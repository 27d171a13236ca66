// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReview(t *testing.T) {
	cs, err := Parse("c.yaml", []byte(validConfig+`  git:
    url: git@github.com:platform/mcs.git
  review:
    enabled: true
    forge:
      provider: github
      token:
        secretRef: {namespace: mcs-gitops, name: forge-token}
`))
	require.NoError(t, err)
	f := cs.Spec.Review.Forge
	assert.True(t, cs.Spec.Review.Enabled)
	assert.Equal(t, ForgeGitHub, f.Provider)
	assert.Equal(t, "value", f.Token.SecretRef.Key, "the Secret key defaults as for spec.git")
	repo, err := f.RepositoryPath(cs.Spec.Git.URL)
	require.NoError(t, err)
	assert.Equal(t, "platform/mcs", repo)

	app, err := Parse("c.yaml", []byte(validConfig+`  git:
    url: https://github.com/platform/mcs.git
  review:
    enabled: true
    forge:
      provider: github
      githubApp:
        appID: 12345
        installationID: 678
        privateKey: {secretRef: {namespace: mcs-gitops, name: app-key}}
`))
	require.NoError(t, err)
	assert.Equal(t, "value", app.Spec.Review.Forge.GitHubApp.PrivateKey.SecretRef.Key)

	off, err := Parse("c.yaml", []byte(validConfig))
	require.NoError(t, err)
	assert.False(t, off.Spec.Review.Enabled, "review mode is off unless asked for")
}

func TestRepositoryPath(t *testing.T) {
	for url, want := range map[string]string{
		"https://github.com/platform/mcs.git":                 "platform/mcs",
		"https://github.com/platform/mcs":                     "platform/mcs",
		"https://git@gitlab.example/group/sub/mcs.git/":       "group/sub/mcs",
		"ssh://git@gitea.example:2222/platform/mcs.git":       "platform/mcs",
		"git@github.com:platform/mcs.git":                     "platform/mcs",
		"gitlab.example:group/mcs":                            "group/mcs",
		"http://127.0.0.1:3000/lab/r.git":                     "lab/r",
		"https://dev.azure.example/org/project/_git/mcs":      "org/project/_git/mcs",
		"ssh://git@github.com/platform/mcs.git?query=ignored": "platform/mcs",
	} {
		got, err := ForgeOptions{}.RepositoryPath(url)
		if assert.NoError(t, err, url) {
			assert.Equal(t, want, got, url)
		}
	}
	for _, url := range []string{"", "/srv/git/mcs.git", "file:///srv/git/mcs.git", "./mcs", "https://github.com/"} {
		_, err := ForgeOptions{}.RepositoryPath(url)
		assert.Error(t, err, "%q has no forge repository", url)
	}
	got, err := ForgeOptions{Repository: "/platform/other/"}.RepositoryPath("/srv/git/mcs.git")
	require.NoError(t, err)
	assert.Equal(t, "platform/other", got, "repository wins over spec.git.url")
}

func TestParseRejectsBadReview(t *testing.T) {
	const gh = "  git:\n    url: https://github.com/platform/mcs.git\n"
	for name, tc := range map[string]struct{ yaml, want string }{
		"no provider": {gh + "  review:\n    enabled: true\n    forge:\n      token: {env: T}\n",
			"spec.review.forge.provider: required"},
		"unknown provider": {gh + "  review:\n    forge:\n      provider: bitbucket\n      token: {env: T}\n",
			"spec.review.forge.provider"},
		"gitea without url": {gh + "  review:\n    forge:\n      provider: gitea\n      token: {env: T}\n",
			"spec.review.forge.url: required for gitea"},
		"self-hosted without url": {"  git:\n    url: https://gitlab.corp.example/g/mcs.git\n  review:\n    forge:\n      provider: gitlab\n      token: {env: T}\n",
			"spec.review.forge.url: required: spec.git.url is on gitlab.corp.example"},
		"url with token": {gh + "  review:\n    forge:\n      provider: gitea\n      url: https://bob:hunter2@gitea.example\n      token: {env: T}\n",
			"spec.review.forge.url"},
		"ftp url": {gh + "  review:\n    forge:\n      provider: gitea\n      url: ftp://gitea.example\n      token: {env: T}\n",
			"spec.review.forge.url: scheme"},
		"local repo, no repository": {"  git:\n    url: /srv/git/mcs.git\n  review:\n    forge:\n      provider: gitea\n      url: https://gitea.example\n      token: {env: T}\n",
			"spec.review.forge.repository: cannot be derived from spec.git.url"},
		"github subgroup": {gh + "  review:\n    forge:\n      provider: github\n      repository: a/b/c\n      token: {env: T}\n",
			"spec.review.forge.repository: \"a/b/c\" is not an owner/name path"},
		"unknown kind": {gh + "  review:\n    kinds: [Export, Imports]\n    forge:\n      provider: github\n      token: {env: T}\n",
			"spec.review.kinds[1]: unknown kind \"Imports\""},
		"bad poll": {gh + "  review:\n    pollInterval: soon\n    forge:\n      provider: github\n      token: {env: T}\n",
			"spec.review.pollInterval"},
		"no credential": {gh + "  review:\n    enabled: true\n    forge:\n      provider: github\n",
			"spec.review.forge.token: required"},
		"two sources": {gh + "  review:\n    forge:\n      provider: github\n      token: {env: T, path: /t}\n",
			"spec.review.forge.token: set exactly one of"},
		"token and app": {gh + "  review:\n    forge:\n      provider: github\n      token: {env: T}\n      githubApp: {appID: 1, installationID: 2, privateKey: {env: K}}\n",
			"spec.review.forge: set token or githubApp, not both"},
		"app on gitlab": {"  git:\n    url: https://gitlab.com/g/mcs.git\n  review:\n    forge:\n      provider: gitlab\n      githubApp: {appID: 1, installationID: 2, privateKey: {env: K}}\n",
			"spec.review.forge.githubApp: applies to provider github only"},
		"app without key": {gh + "  review:\n    forge:\n      provider: github\n      githubApp: {appID: 1, installationID: 2}\n",
			"spec.review.forge.githubApp.privateKey: required"},
		"app without id": {gh + "  review:\n    forge:\n      provider: github\n      githubApp: {installationID: 2, privateKey: {env: K}}\n",
			"spec.review.forge.githubApp.appID"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(validConfig+tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "hunter2", "a credential never reaches an error message")
		})
	}
}
