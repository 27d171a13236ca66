// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"regexp"
	"strings"
)

// tokenPrefixes are the fixed prefixes forges and clouds give their tokens,
// so a pasted one is recognised however it is used.
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "xoxb-", "xoxp-", "AKIA", "ASIA"}

var (
	// jwtShape is three base64url segments, the first a JSON header.
	jwtShape = regexp.MustCompile(`^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$`)
	// opaqueToken is a long run of token characters mixing cases and
	// digits; names, paths and DNS labels in a ClusterSet are lower case
	// or carry separators, so they do not match.
	opaqueToken = regexp.MustCompile(`^[A-Za-z0-9_\-+/=]{32,}$`)
	// plainUser is what a user name in a repository URL may look like.
	plainUser = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// TokenShaped reports whether v looks like a bearer token, a JWT or an
// access key rather than a name or a path.
func TokenShaped(v string) bool {
	v = strings.TrimSpace(v)
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+16 {
			return true
		}
	}
	if jwtShape.MatchString(v) {
		return true
	}
	if opaqueToken.MatchString(v) {
		upper, lower, digit := false, false, false
		for _, r := range v {
			switch {
			case r >= 'A' && r <= 'Z':
				upper = true
			case r >= 'a' && r <= 'z':
				lower = true
			case r >= '0' && r <= '9':
				digit = true
			}
		}
		return upper && lower && digit
	}
	return false
}

// PlainUserName reports whether the user part of a repository URL is a
// user name (git, oauth2, a login) and not a token pasted there, which
// forges accept as the whole credential.
func PlainUserName(u string) bool {
	return plainUser.MatchString(u) && !TokenShaped(u)
}

// URLUserinfo returns the userinfo ("user" or "user:password") of a
// scheme://userinfo@host/... URL, and whether it has one.
func URLUserinfo(u string) (string, bool) {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "", false
	}
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", false
	}
	return rest[:at], true
}

// URLUserIsToken reports whether v is a URL whose user part is not a
// plain user name.
func URLUserIsToken(v string) bool {
	info, ok := URLUserinfo(v)
	if !ok {
		return false
	}
	user, _, _ := strings.Cut(info, ":")
	return !PlainUserName(user)
}
