// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func secrets(m map[string]string) func(*v1alpha1.CredentialSource) ([]byte, error) {
	return func(s *v1alpha1.CredentialSource) ([]byte, error) {
		v, ok := m[s.Env]
		if !ok {
			return nil, errors.New("not set")
		}
		return []byte(v), nil
	}
}

const token = "ghp_SuperSecretToken123"

func TestAuthFromHTTPSToken(t *testing.T) {
	a, err := AuthFrom(v1alpha1.GitAuth{Token: &v1alpha1.CredentialSource{Env: "TOK"}}, "https://git.example.com/org/repo.git",
		secrets(map[string]string{"TOK": token + "\n"}))
	require.NoError(t, err)
	assert.Equal(t, &http.BasicAuth{Username: "git", Password: token}, a)
	assert.NotContains(t, a.String(), token, "go-git's String masks the password")

	a, err = AuthFrom(v1alpha1.GitAuth{}, "https://git.example.com/org/repo.git", nil)
	require.NoError(t, err)
	assert.Nil(t, a, "no token: anonymous")

	a, err = AuthFrom(v1alpha1.GitAuth{Token: &v1alpha1.CredentialSource{Env: "TOK"}}, "/srv/git/repo.git", nil)
	require.NoError(t, err)
	assert.Nil(t, a, "local paths take no credentials")
}

func TestAuthFromErrorsNeverHoldSecrets(t *testing.T) {
	key := ed25519Key(t)
	read := secrets(map[string]string{"TOK": token, "KEY": "garbage " + token, "EMPTY": " \n", "KNOWN": "not a known hosts line " + token})
	for name, c := range map[string]struct {
		auth v1alpha1.GitAuth
		url  string
		want string
	}{
		"token unreadable": {v1alpha1.GitAuth{Token: &v1alpha1.CredentialSource{Env: "MISSING"}}, "https://h/r", "environment variable MISSING"},
		"token empty":      {v1alpha1.GitAuth{Token: &v1alpha1.CredentialSource{Env: "EMPTY"}}, "https://h/r", "is empty"},
		"token on ssh":     {v1alpha1.GitAuth{Token: &v1alpha1.CredentialSource{Env: "TOK"}}, "git@h:r.git", "token applies to https"},
		"key on https":     {v1alpha1.GitAuth{SSHKey: &v1alpha1.CredentialSource{Env: "KEY"}}, "https://h/r", "apply to ssh"},
		"no known hosts":   {v1alpha1.GitAuth{SSHKey: &v1alpha1.CredentialSource{Env: "KEY"}}, "ssh://git@h/r", "knownHosts is required"},
		"bad key": {v1alpha1.GitAuth{SSHKey: &v1alpha1.CredentialSource{Env: "KEY"}, KnownHosts: &v1alpha1.CredentialSource{Env: "KNOWN"}},
			"ssh://git@h/r", "not a usable private key"},
		"bad known hosts": {v1alpha1.GitAuth{SSHKey: &v1alpha1.CredentialSource{Path: "/k"}, KnownHosts: &v1alpha1.CredentialSource{Env: "KNOWN"}},
			"ssh://git@h/r", "knownHosts from environment variable KNOWN"},
		"bad url": {v1alpha1.GitAuth{}, "https://bot:" + token + "@h:badport/r", "not a path"},
	} {
		t.Run(name, func(t *testing.T) {
			r := read
			if c.auth.SSHKey != nil && c.auth.SSHKey.Path == "/k" {
				r = func(s *v1alpha1.CredentialSource) ([]byte, error) {
					if s.Path == "/k" {
						return key, nil
					}
					return read(s)
				}
			}
			_, err := AuthFrom(c.auth, c.url, r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), token)
			assert.NotContains(t, err.Error(), "PRIVATE KEY")
		})
	}
}

func TestAuthFromSSHChecksHostKey(t *testing.T) {
	key := ed25519Key(t)
	hostPub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	hostKey, err := ssh.NewPublicKey(hostPub)
	require.NoError(t, err)
	otherPub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	otherKey, err := ssh.NewPublicKey(otherPub)
	require.NoError(t, err)
	known := "git.example.com " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostKey))) + "\n"

	a, err := AuthFrom(v1alpha1.GitAuth{SSHKey: &v1alpha1.CredentialSource{Env: "KEY"}, KnownHosts: &v1alpha1.CredentialSource{Env: "KNOWN"}},
		"deploy@git.example.com:org/repo.git", secrets(map[string]string{"KEY": string(key), "KNOWN": known}))
	require.NoError(t, err)
	pk, ok := a.(*gitssh.PublicKeys)
	require.True(t, ok)
	assert.Equal(t, "deploy", pk.User)
	addr := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 22}
	assert.NoError(t, pk.HostKeyCallback("git.example.com:22", addr, hostKey))
	assert.Error(t, pk.HostKeyCallback("git.example.com:22", addr, otherKey), "an unknown host key is refused")
	assert.Error(t, pk.HostKeyCallback("evil.example.com:22", addr, hostKey), "an unknown host is refused")
	assert.Contains(t, pk.HostKeyAlgorithms, ssh.KeyAlgoED25519)
}

func ed25519Key(t *testing.T) []byte {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	return pem.EncodeToMemory(block)
}
