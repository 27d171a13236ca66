// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// spec.git and spec.sync: where the rendered repository lives, and how the
// loop paces, times out and retries.

import (
	"fmt"
	"time"
)

// Duration is a Go duration string such as "10s" or "1h30m". Empty means
// the field's default; "0" means none (no debounce, no commit pacing,
// staleAfter never) where the field allows it.
type Duration string

// Get parses d, returning def when d is empty.
func (d Duration) Get(def time.Duration) (time.Duration, error) {
	if d == "" {
		return def, nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 10s or 5m", string(d))
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", string(d))
	}
	return v, nil
}

// GitOptions say where the rendered repository lives and who commits to it.
// They hold references to credentials, never the credentials.
type GitOptions struct {
	// URL of the repository: a local path (an existing clone, or a bare
	// repository to clone), https://..., ssh://... or user@host:path.
	// The --repo flag overrides it.
	URL string `json:"url,omitempty" schema:"maxLength=2048"`
	// Branch to commit to. Defaults to main.
	Branch string `json:"branch,omitempty" schema:"maxLength=255;default=main"`
	// Path inside the repository that holds clusterset.yaml, inputs/,
	// clusters/ and status/. Defaults to the repository root.
	Path string `json:"path,omitempty" schema:"maxLength=1024"`
	// Author of the commits; also the committer.
	Author GitAuthor `json:"author,omitempty"`
	// Auth says where the credentials for URL live.
	Auth GitAuth `json:"auth,omitempty"`
	// Signing makes the loop sign its commits (SSH or OpenPGP), so a
	// branch that requires signed commits accepts them. See
	// docs/signing.md.
	Signing *GitSigning `json:"signing,omitempty"`
	// Verify makes apply, sync and run refuse a commit unless it, and
	// every commit since the loop's last signed one, is signed by one of
	// its keys. See docs/signing.md.
	Verify *GitVerify `json:"verify,omitempty"`
}

// SigningFormat is how commits are signed: ssh or openpgp.
type SigningFormat string

// Signing formats, as git's gpg.format names them.
const (
	SigningSSH     SigningFormat = "ssh"
	SigningOpenPGP SigningFormat = "openpgp"
)

// GitSigning says how the loop signs its commits. The private key is a
// credential: it is read at run time, never written in the config.
type GitSigning struct {
	// Format of the signatures: ssh (an OpenSSH key, as ssh-keygen -Y sign
	// makes them) or openpgp (as gpg makes them).
	Format SigningFormat `json:"format" schema:"enum=ssh|openpgp"`
	// Key is the private key: an OpenSSH or PEM private key for ssh, an
	// armored OpenPGP private key for openpgp.
	Key *CredentialSource `json:"key"`
	// Passphrase of the key, when it has one.
	Passphrase *CredentialSource `json:"passphrase,omitempty"`
}

// GitVerify lists the keys commits must be signed by before anything is
// applied from them.
type GitVerify struct {
	// Keys whose signatures are accepted: the loop's own signing key, the
	// keys of the people allowed to merge, and the forge's key when it
	// makes merge commits itself.
	Keys []VerifyKey `json:"keys" schema:"minItems=1"`
	// TrustedBefore is a full commit id: that commit and its ancestors
	// are accepted unchecked, so verification can be turned on over a
	// history that was not signed.
	TrustedBefore string `json:"trustedBefore,omitempty" schema:"pattern=^[0-9a-f]{40}$"`
}

// VerifyKey is one accepted public key. Set exactly one of ssh, openpgp
// and source. Public keys are not secret: they may be written inline.
type VerifyKey struct {
	// Name says whose key it is; errors and logs use it.
	Name string `json:"name" schema:"maxLength=253"`
	// SSH is a public key as an authorized_keys or allowed signers line
	// holds it ("ssh-ed25519 AAAA... comment").
	SSH PublicKey `json:"ssh,omitempty" schema:"maxLength=16384"`
	// OpenPGP is an armored OpenPGP public key block (gpg --armor --export).
	OpenPGP PublicKey `json:"openpgp,omitempty" schema:"maxLength=1048576"`
	// Source is a file, environment variable or Secret holding either.
	Source *CredentialSource `json:"source,omitempty"`
}

// PublicKey is public key material, allowed inline in the config (a
// private key is not).
type PublicKey string

// GitAuthor names who the commits are from.
type GitAuthor struct {
	// Name of the author. Defaults to mcs-gitops.
	Name string `json:"name,omitempty" schema:"maxLength=255;default=mcs-gitops"`
	// Email of the author. Defaults to mcs-gitops@localhost.
	Email string `json:"email,omitempty" schema:"maxLength=255;default=mcs-gitops@localhost"`
}

// GitAuth points at the credentials for the repository URL. For https set
// token (and optionally username); for ssh set sshKey and knownHosts.
type GitAuth struct {
	// Username sent with an https token. Defaults to "git", which GitHub,
	// GitLab and Gitea all accept with a token.
	Username string `json:"username,omitempty" schema:"maxLength=255;default=git"`
	// Token for https: a personal access or deploy token.
	Token *CredentialSource `json:"token,omitempty"`
	// SSHKey is a PEM private key for ssh URLs.
	SSHKey *CredentialSource `json:"sshKey,omitempty"`
	// KnownHosts is a known_hosts file the ssh server's key must appear in.
	// Required with sshKey: host keys are always checked.
	KnownHosts *CredentialSource `json:"knownHosts,omitempty"`
}

// CredentialSource is where one secret value is read from at run time.
// Exactly one field must be set.
type CredentialSource struct {
	// Env names an environment variable holding the value.
	Env string `json:"env,omitempty" schema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$;maxLength=255"`
	// Path of a file holding the value.
	Path string `json:"path,omitempty" schema:"maxLength=4096"`
	// SecretRef names a Secret key in the management cluster.
	SecretRef *SecretKeyRef `json:"secretRef,omitempty"`
}

// SyncOptions tune the live loop (sync and run).
type SyncOptions struct {
	// MemberTimeout bounds reading one member; its apply gets three times
	// that plus 100ms per object sent (a first sync gets the time its size
	// needs). Each member has its own: a slow one fails alone. Defaults
	// to 10s.
	MemberTimeout Duration `json:"memberTimeout,omitempty" schema:"pattern=^(0|([0-9]+(ns|us|ms|s|m|h))+)$;default=10s"`
	// StaleAfter is how long an unreachable member's last known exports
	// stay imported elsewhere. Empty or "0" means forever. When it passes,
	// the exports are dropped in a commit that says why.
	StaleAfter Duration `json:"staleAfter,omitempty" schema:"pattern=^(0|([0-9]+(ns|us|ms|s|m|h))+)$"`
	// MinCommitInterval is the least time between two commits of run, so
	// endpoint churn does not make a commit per pod. Defaults to 10s; "0"
	// turns pacing off.
	MinCommitInterval Duration `json:"minCommitInterval,omitempty" schema:"pattern=^(0|([0-9]+(ns|us|ms|s|m|h))+)$;default=10s"`
	// Debounce is how long run waits after a change for more before it
	// starts a cycle. Defaults to 100ms; "0" starts at once.
	Debounce Duration `json:"debounce,omitempty" schema:"pattern=^(0|([0-9]+(ns|us|ms|s|m|h))+)$;default=100ms"`
	// ResyncInterval is how often run does a full cycle without any watch
	// event, to repair drift. Defaults to 5m.
	ResyncInterval Duration `json:"resyncInterval,omitempty" schema:"pattern=^(0|([0-9]+(ns|us|ms|s|m|h))+)$;default=5m"`
	// PushRetries bounds the fetch, reset, re-render, push attempts after a
	// rejected push. Defaults to 5.
	PushRetries int32 `json:"pushRetries,omitempty" schema:"minimum=0;maximum=100;default=5"`
	// MemberQPS is the client-side limit on requests per second to each
	// member, with bursts of up to MemberBurst. A first sync or a rejoin
	// writes about two requests per imported object in a burst, so the
	// defaults (200, burst 400) are sized for that; -1 turns client-side
	// limiting off and leaves it to the member's API priority and
	// fairness, whose "429 Retry-After" answers the client honours either
	// way.
	MemberQPS int32 `json:"memberQPS,omitempty" schema:"minimum=-1;maximum=100000;default=200"`
	// MemberBurst is the most requests sent to one member at once before
	// MemberQPS applies. Defaults to twice MemberQPS.
	MemberBurst int32 `json:"memberBurst,omitempty" schema:"minimum=0;maximum=100000"`
	// WithdrawalGuard holds a member that withdraws an unusual share of
	// its exports in one cycle (a namespace deleted, a bad Helm upgrade,
	// an etcd restored with CRDs before workloads) until a person releases
	// it. On by default.
	WithdrawalGuard *WithdrawalGuard `json:"withdrawalGuard,omitempty"`
}

// WithdrawalGuard: a member whose last commit rendered N exports and that
// now exports W fewer is held when W >= minExports and W is more than
// maxSharePercent of N. Held, its last committed snapshot stands in for
// it (nothing of it is withdrawn, its endpoints stop following the live
// ones), status/members.yaml says so with a digest of the withdrawal,
// and release with that digest lets it through.
type WithdrawalGuard struct {
	// MinExports is the fewest exports one cycle must withdraw from a
	// member before the guard looks at the share. Defaults to 5, so that
	// a team unexporting a service or two is never held; -1 turns the
	// guard off.
	MinExports int32 `json:"minExports,omitempty" schema:"minimum=-1;maximum=1000000;default=5"`
	// MaxSharePercent is the share of a member's exports one cycle may
	// withdraw; more is held. Defaults to 50.
	MaxSharePercent int32 `json:"maxSharePercent,omitempty" schema:"minimum=1;maximum=100;default=50"`
	// MaxClusterSetSharePercent holds every member that withdraws
	// anything when the members together withdraw at least minExports and
	// more than this share of the ClusterSet's exports in one cycle (one
	// bad release deployed everywhere). Defaults to 50.
	MaxClusterSetSharePercent int32 `json:"maxClusterSetSharePercent,omitempty" schema:"minimum=1;maximum=100;default=50"`
	// Release lets held withdrawals through: each names a member and the
	// digest status/members.yaml shows for its withdrawal. A release of
	// another digest (the withdrawal changed since) does nothing.
	Release []WithdrawalRelease `json:"release,omitempty" schema:"maxItems=1000"`
}

// WithdrawalRelease is one held withdrawal a person accepts.
type WithdrawalRelease struct {
	Member string `json:"member" schema:"maxLength=63"`
	Digest string `json:"digest" schema:"pattern=^[0-9a-f]{12}$"`
}

// Guard is the withdrawal guard in force: the defaults when unset.
func (s SyncOptions) Guard() WithdrawalGuard {
	g := WithdrawalGuard{}
	if s.WithdrawalGuard != nil {
		g = *s.WithdrawalGuard
	}
	if g.MinExports == 0 {
		g.MinExports = DefaultGuardMinExports
	}
	if g.MaxSharePercent == 0 {
		g.MaxSharePercent = DefaultGuardMaxSharePercent
	}
	if g.MaxClusterSetSharePercent == 0 {
		g.MaxClusterSetSharePercent = DefaultGuardMaxSharePercent
	}
	return g
}

// RateLimit is the client-side request limit to each member: qps < 0
// means none.
func (s SyncOptions) RateLimit() (qps float32, burst int) {
	qps, burst = float32(s.MemberQPS), int(s.MemberBurst)
	if qps == 0 {
		qps = DefaultMemberQPS
	}
	if burst == 0 && qps > 0 {
		burst = int(2 * qps)
	}
	return qps, burst
}

// Defaults of the loop settings, applied by the loop when a field is empty.
const (
	DefaultBranch            = "main"
	DefaultAuthorName        = "mcs-gitops"
	DefaultAuthorEmail       = "mcs-gitops@localhost"
	DefaultGitUsername       = "git"
	DefaultMemberTimeout     = 10 * time.Second
	DefaultMinCommitInterval = 10 * time.Second
	DefaultDebounce          = 100 * time.Millisecond
	DefaultResyncInterval    = 5 * time.Minute
	DefaultPushRetries       = 5
	DefaultMemberQPS         = 200
	// A cycle may withdraw up to 4 exports of a member, or up to half of
	// them, without a person: see WithdrawalGuard.
	DefaultGuardMinExports      = 5
	DefaultGuardMaxSharePercent = 50
)

// Timings are SyncOptions parsed, with defaults applied. StaleAfter 0
// means never.
type Timings struct {
	MemberTimeout, StaleAfter, MinCommitInterval, Debounce, ResyncInterval time.Duration
	PushRetries                                                            int
}

// Timings parses the durations; Load has already validated them.
func (s SyncOptions) Timings() Timings {
	get := func(d Duration, def time.Duration) time.Duration {
		v, err := d.Get(def)
		if err != nil {
			return def
		}
		return v
	}
	t := Timings{
		MemberTimeout:     get(s.MemberTimeout, DefaultMemberTimeout),
		StaleAfter:        get(s.StaleAfter, 0),
		MinCommitInterval: get(s.MinCommitInterval, DefaultMinCommitInterval),
		Debounce:          get(s.Debounce, DefaultDebounce),
		ResyncInterval:    get(s.ResyncInterval, DefaultResyncInterval),
		PushRetries:       int(s.PushRetries),
	}
	if s.PushRetries == 0 {
		t.PushRetries = DefaultPushRetries
	}
	// Neither can be zero: a read without a deadline could hang a cycle,
	// and a zero resync has no meaning.
	if t.MemberTimeout == 0 {
		t.MemberTimeout = DefaultMemberTimeout
	}
	if t.ResyncInterval == 0 {
		t.ResyncInterval = DefaultResyncInterval
	}
	return t
}
