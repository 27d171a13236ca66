package v1alpha1

import (
	"bytes"
	"fmt"
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

// tokenShaped reports whether v looks like a bearer token, a JWT or an
// access key rather than a name or a path.
func tokenShaped(v string) bool {
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
	return plainUser.MatchString(u) && !tokenShaped(u)
}

// urlUserIsToken reports whether v is a URL whose user part is not a
// plain user name.
func urlUserIsToken(v string) bool {
	info, ok := URLUserinfo(v)
	if !ok {
		return false
	}
	user, _, _ := strings.Cut(info, ":")
	return !PlainUserName(user)
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

// userinfoInText matches the userinfo of scheme://userinfo@host in any text.
var userinfoInText = regexp.MustCompile(`://([^/@\s"']*)@`)

// RedactURLs replaces, in any text (an error, a log line), the password of
// every scheme://user:password@ URL, and a user part that is not a plain
// user name (a token pasted there), with xxxxx.
func RedactURLs(s string) string {
	return userinfoInText.ReplaceAllStringFunc(s, func(m string) string {
		user, _, hasPassword := strings.Cut(m[3:len(m)-1], ":")
		if !PlainUserName(user) {
			user = "xxxxx"
		}
		if hasPassword {
			return "://" + user + ":xxxxx@"
		}
		return "://" + user + "@"
	})
}

// RedactError returns err with RedactURLs applied to its message, keeping
// the chain for errors.Is and errors.As; err itself when nothing changed.
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := RedactURLs(msg); clean != msg {
		return &redactedError{msg: clean, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Describe names where a credential lives, for an error message: the
// variable, file or Secret key, never the value.
func (s *CredentialSource) Describe() string {
	switch {
	case s == nil:
		return "nowhere"
	case s.Env != "":
		return "environment variable " + s.Env
	case s.Path != "":
		return "file " + s.Path
	case s.SecretRef != nil:
		key := s.SecretRef.Key
		if key == "" {
			key = "value"
		}
		return fmt.Sprintf("Secret %s/%s key %s", s.SecretRef.Namespace, s.SecretRef.Name, key)
	}
	return "an empty credential source"
}

// Read reads the credential through read, for the field named field. Its
// errors name the field and where the credential lives (Describe), never
// its value; a credential that is only whitespace is an error too.
func (s *CredentialSource) Read(read func(*CredentialSource) ([]byte, error), field string) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("%s is not set", field)
	}
	if read == nil {
		return nil, fmt.Errorf("%s is set but no way to read credentials was given", field)
	}
	b, err := read(s)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", field, s.Describe(), err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s from %s is empty", field, s.Describe())
	}
	return b, nil
}
