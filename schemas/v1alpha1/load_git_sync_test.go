// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLoopSettings(t *testing.T) {
	cs, err := Parse("c.yaml", []byte(validConfig+`  git:
    url: https://git.example.test/platform/mcs.git
    path: clustersets/prod
    auth:
      token:
        secretRef: {namespace: mcs-gitops, name: git-token}
  sync:
    staleAfter: 1h
    debounce: 50ms
`))
	require.NoError(t, err)
	g := cs.Spec.Git
	assert.Equal(t, "main", g.Branch)
	assert.Equal(t, "mcs-gitops", g.Author.Name)
	assert.Equal(t, "git", g.Auth.Username)
	assert.Equal(t, "value", g.Auth.Token.SecretRef.Key)
	tm := cs.Spec.Sync.Timings()
	assert.Equal(t, Timings{
		MemberTimeout: 10 * time.Second, StaleAfter: time.Hour, MinCommitInterval: 10 * time.Second,
		Debounce: 50 * time.Millisecond, ResyncInterval: 5 * time.Minute, PushRetries: 5,
	}, tm)

	never, err := Parse("c.yaml", []byte(validConfig))
	require.NoError(t, err)
	assert.Zero(t, never.Spec.Sync.Timings().StaleAfter, "staleAfter defaults to never")
}

func TestMemberRateLimit(t *testing.T) {
	for _, tc := range []struct {
		qps, burst int32
		wantQPS    float32
		wantBurst  int
	}{
		{0, 0, DefaultMemberQPS, 2 * DefaultMemberQPS},
		{50, 0, 50, 100},
		{50, 70, 50, 70},
		{-1, 0, -1, 0}, // no client-side limit
	} {
		qps, burst := SyncOptions{MemberQPS: tc.qps, MemberBurst: tc.burst}.RateLimit()
		assert.Equal(t, tc.wantQPS, qps, "memberQPS %d memberBurst %d", tc.qps, tc.burst)
		assert.Equal(t, tc.wantBurst, burst, "memberQPS %d memberBurst %d", tc.qps, tc.burst)
	}
}

func TestParseRejectsBadLoopSettings(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"password in url": {"  git:\n    url: https://bob:hunter2@git.example.test/r.git\n", "spec.git.url: contains a password"},
		"bad duration":    {"  sync:\n    staleAfter: soon\n", `spec.sync.staleAfter: "soon" is not a duration`},
		"ssh without known hosts": {"  git:\n    auth:\n      sshKey: {path: /keys/id}\n",
			"spec.git.auth.knownHosts: required with sshKey"},
		"two sources":    {"  git:\n    auth:\n      token: {env: T, path: /t}\n", "spec.git.auth.token: set exactly one of"},
		"escaping path":  {"  git:\n    path: ../elsewhere\n", "spec.git.path"},
		"qps below -1":   {"  sync:\n    memberQPS: -2\n", "spec.sync.memberQPS"},
		"negative burst": {"  sync:\n    memberBurst: -1\n", "spec.sync.memberBurst"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(validConfig+tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "hunter2", "a credential never reaches an error message")
		})
	}
}

func TestParseSigningAndVerify(t *testing.T) {
	cs, err := Parse("c.yaml", []byte(validConfig+`  git:
    signing:
      format: ssh
      key:
        secretRef: {namespace: mcs-gitops, name: git-signing}
    verify:
      trustedBefore: 0123456789abcdef0123456789abcdef01234567
      keys:
      - name: loop
        ssh: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOeFQ7MGo4pUUbDGx0r6kLnQ7yqAQ7zCl2BWrKB0lJ4W loop
      - name: alice
        openpgp: |
          -----BEGIN PGP PUBLIC KEY BLOCK-----

          mDMEZ0000BYJKwYBBAHaRw8BAQdA
          -----END PGP PUBLIC KEY BLOCK-----
      - name: forge
        source: {path: /keys/forge.pub}
`))
	require.NoError(t, err, "public keys are allowed inline")
	g := cs.Spec.Git
	assert.Equal(t, SigningSSH, g.Signing.Format)
	assert.Equal(t, "value", g.Signing.Key.SecretRef.Key)
	require.Len(t, g.Verify.Keys, 3)
	assert.Contains(t, string(g.Verify.Keys[1].OpenPGP), "BEGIN PGP PUBLIC KEY BLOCK")
}

func TestParseRejectsBadSigningAndVerify(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"no format":  {"  git:\n    signing:\n      key: {path: /k}\n", "spec.git.signing.format: required"},
		"bad format": {"  git:\n    signing:\n      format: x509\n      key: {path: /k}\n", `spec.git.signing.format: "x509" is not ssh or openpgp`},
		"no key":     {"  git:\n    signing:\n      format: ssh\n", "spec.git.signing.key: required"},
		"inline private key": {"  git:\n    verify:\n      keys:\n      - name: a\n        openpgp: \"-----BEGIN PGP PRIVATE KEY BLOCK-----\\nhunter2\"\n",
			"spec.git.verify.keys[0].openpgp: is a private key"},
		"no keys":       {"  git:\n    verify:\n      keys: []\n", "spec.git.verify.keys: list at least one key"},
		"two kinds":     {"  git:\n    verify:\n      keys:\n      - name: a\n        ssh: ssh-ed25519 AAAA a\n        source: {path: /k}\n", "spec.git.verify.keys[0]: set exactly one of ssh, openpgp and source"},
		"not ssh":       {"  git:\n    verify:\n      keys:\n      - name: a\n        ssh: AAAA\n", "spec.git.verify.keys[0].ssh: is not an SSH public key line"},
		"not openpgp":   {"  git:\n    verify:\n      keys:\n      - name: a\n        openpgp: mQINBF\n", "spec.git.verify.keys[0].openpgp: is not an armored OpenPGP public key"},
		"no name":       {"  git:\n    verify:\n      keys:\n      - ssh: ssh-ed25519 AAAA a\n", "spec.git.verify.keys[0].name: required"},
		"same name":     {"  git:\n    verify:\n      keys:\n      - {name: a, ssh: ssh-ed25519 AAAA a}\n      - {name: a, ssh: ssh-ed25519 AAAB b}\n", `spec.git.verify.keys[1].name: "a" is also the name of keys[0]`},
		"short trusted": {"  git:\n    verify:\n      trustedBefore: 0123abc\n      keys:\n      - {name: a, ssh: ssh-ed25519 AAAA a}\n", `spec.git.verify.trustedBefore: "0123abc" is not a full commit id`},
		"unknown field": {"  git:\n    verify:\n      keys:\n      - {name: a, ssh: ssh-ed25519 AAAA a, x509: b}\n", "spec.git.verify.keys[0].x509: unknown field"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(validConfig+tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "hunter2", "a credential never reaches an error message")
		})
	}
}
