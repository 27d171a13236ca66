// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

func (g GitOptions) validate(p string) ErrorList {
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if u, err := url.Parse(g.URL); err == nil && u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword {
			add(p+".url", "contains a password; clusterset.yaml is committed to Git, so put the token in a Secret or environment variable and reference it from spec.git.auth.token")
		} else if !redact.PlainUserName(u.User.Username()) {
			add(p+".url", "its user part is not a plain user name (forges accept a token there); clusterset.yaml is committed to Git, so put the token in a Secret or environment variable and reference it from spec.git.auth.token")
		}
	}
	if strings.ContainsAny(g.URL, "\n\r") {
		add(p+".url", "%s", credentialAdvice)
	}
	if g.Branch != "" && (strings.HasPrefix(g.Branch, "-") || strings.ContainsAny(g.Branch, " ~^:?*[\\") ||
		strings.Contains(g.Branch, "..")) {
		add(p+".branch", "%q is not a valid branch name", g.Branch)
	}
	if g.Path != "" {
		clean := path.Clean(g.Path)
		if path.IsAbs(g.Path) || clean == ".." || strings.HasPrefix(clean, "../") {
			add(p+".path", "%q must be a relative path inside the repository", g.Path)
		}
	}
	a := g.Auth
	errs = append(errs, a.Token.validate(p+".auth.token")...)
	errs = append(errs, a.SSHKey.validate(p+".auth.sshKey")...)
	errs = append(errs, a.KnownHosts.validate(p+".auth.knownHosts")...)
	if a.Token != nil && a.SSHKey != nil {
		add(p+".auth", "set token (https) or sshKey (ssh), not both")
	}
	if a.SSHKey != nil && a.KnownHosts == nil {
		add(p+".auth.knownHosts", "required with sshKey: the server's host key is always checked")
	}
	errs = append(errs, g.Signing.validate(p+".signing")...)
	errs = append(errs, g.Verify.validate(p+".verify")...)
	return errs
}

func (s *GitSigning) validate(p string) ErrorList {
	if s == nil {
		return nil
	}
	var errs ErrorList
	switch s.Format {
	case SigningSSH, SigningOpenPGP:
	case "":
		errs = append(errs, &FieldError{Field: p + ".format", Msg: "required: ssh or openpgp"})
	default:
		errs = append(errs, &FieldError{Field: p + ".format", Msg: fmt.Sprintf("%q is not ssh or openpgp", s.Format)})
	}
	if s.Key == nil {
		errs = append(errs, &FieldError{Field: p + ".key", Msg: "required: where the private key is read from (a Secret, file or environment variable)"})
	}
	errs = append(errs, s.Key.validate(p+".key")...)
	errs = append(errs, s.Passphrase.validate(p+".passphrase")...)
	return errs
}

// trustedCommit is a full hexadecimal commit id.
var trustedCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

func (v *GitVerify) validate(p string) ErrorList {
	if v == nil {
		return nil
	}
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if len(v.Keys) == 0 {
		add(p+".keys", "list at least one key: with none, no commit could be applied")
	}
	names := map[string]int{}
	for i, k := range v.Keys {
		kp := fmt.Sprintf("%s.keys[%d]", p, i)
		if strings.TrimSpace(k.Name) == "" {
			add(kp+".name", "required: say whose key it is")
		} else if first, dup := names[k.Name]; dup {
			add(kp+".name", "%q is also the name of keys[%d]", k.Name, first)
		} else {
			names[k.Name] = i
		}
		set := 0
		for _, b := range []bool{k.SSH != "", k.OpenPGP != "", k.Source != nil} {
			if b {
				set++
			}
		}
		if set != 1 {
			add(kp, "set exactly one of ssh, openpgp and source")
		}
		if k.SSH != "" && !strings.HasPrefix(strings.TrimSpace(string(k.SSH)), "ssh-") &&
			!strings.HasPrefix(strings.TrimSpace(string(k.SSH)), "ecdsa-") && !strings.HasPrefix(strings.TrimSpace(string(k.SSH)), "sk-") {
			add(kp+".ssh", "is not an SSH public key line such as \"ssh-ed25519 AAAA... name\"")
		}
		if k.OpenPGP != "" && !strings.Contains(string(k.OpenPGP), "-----BEGIN PGP PUBLIC KEY BLOCK-----") {
			add(kp+".openpgp", "is not an armored OpenPGP public key (gpg --armor --export KEYID)")
		}
		errs = append(errs, k.Source.validate(kp+".source")...)
	}
	if v.TrustedBefore != "" && !trustedCommit.MatchString(v.TrustedBefore) {
		add(p+".trustedBefore", "%q is not a full commit id (40 lower-case hexadecimal digits, as git rev-parse prints it)", v.TrustedBefore)
	}
	return errs
}

func (c *CredentialSource) validate(p string) ErrorList {
	if c == nil {
		return nil
	}
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	set := 0
	for _, b := range []bool{c.Env != "", c.Path != "", c.SecretRef != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		add(p, "set exactly one of env, path and secretRef")
	}
	if strings.ContainsAny(c.Path, "\n\r") {
		add(p+".path", "%s", credentialAdvice)
	}
	if s := c.SecretRef; s != nil {
		for _, m := range validation.IsDNS1123Label(s.Namespace) {
			add(p+".secretRef.namespace", "%q is not a valid namespace: %s", s.Namespace, m)
		}
		for _, m := range validation.IsDNS1123Subdomain(s.Name) {
			add(p+".secretRef.name", "%q is not a valid Secret name: %s", s.Name, m)
		}
		for _, m := range validation.IsConfigMapKey(s.Key) {
			add(p+".secretRef.key", "%q is not a valid key: %s", s.Key, m)
		}
	}
	return errs
}

func (s SyncOptions) validate(p string) ErrorList {
	var errs ErrorList
	for _, f := range []struct {
		name string
		v    Duration
	}{
		{"memberTimeout", s.MemberTimeout}, {"staleAfter", s.StaleAfter},
		{"minCommitInterval", s.MinCommitInterval}, {"debounce", s.Debounce},
		{"resyncInterval", s.ResyncInterval},
	} {
		if _, err := f.v.Get(0); err != nil {
			errs = append(errs, &FieldError{Field: p + "." + f.name, Msg: err.Error()})
		}
	}
	if s.PushRetries < 0 || s.PushRetries > 100 {
		errs = append(errs, &FieldError{Field: p + ".pushRetries", Msg: fmt.Sprintf("%d is outside 0-100", s.PushRetries)})
	}
	if s.MemberQPS < -1 || s.MemberQPS > 100000 {
		errs = append(errs, &FieldError{Field: p + ".memberQPS", Msg: fmt.Sprintf("%d is outside -1 (no client-side limit) to 100000", s.MemberQPS)})
	}
	if s.MemberBurst < 0 || s.MemberBurst > 100000 {
		errs = append(errs, &FieldError{Field: p + ".memberBurst", Msg: fmt.Sprintf("%d is outside 0-100000", s.MemberBurst)})
	}
	if g := s.WithdrawalGuard; g != nil {
		gp := p + ".withdrawalGuard"
		if g.MinExports < -1 || g.MinExports > 1000000 {
			errs = append(errs, &FieldError{Field: gp + ".minExports", Msg: fmt.Sprintf("%d is outside -1 (off) to 1000000", g.MinExports)})
		}
		if g.MaxSharePercent < 0 || g.MaxSharePercent > 100 {
			errs = append(errs, &FieldError{Field: gp + ".maxSharePercent", Msg: fmt.Sprintf("%d is outside 1-100", g.MaxSharePercent)})
		}
		if g.MaxClusterSetSharePercent < 0 || g.MaxClusterSetSharePercent > 100 {
			errs = append(errs, &FieldError{Field: gp + ".maxClusterSetSharePercent", Msg: fmt.Sprintf("%d is outside 1-100", g.MaxClusterSetSharePercent)})
		}
		for i, r := range g.Release {
			rp := fmt.Sprintf("%s.release[%d]", gp, i)
			if r.Member == "" {
				errs = append(errs, &FieldError{Field: rp + ".member", Msg: "is required"})
			}
			if !releaseDigest.MatchString(r.Digest) {
				errs = append(errs, &FieldError{Field: rp + ".digest", Msg: fmt.Sprintf("%q is not the 12 hex digits status/members.yaml shows", r.Digest)})
			}
		}
	}
	return errs
}

var releaseDigest = regexp.MustCompile(`^[0-9a-f]{12}$`)
