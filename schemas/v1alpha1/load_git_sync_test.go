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
