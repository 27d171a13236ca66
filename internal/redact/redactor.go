// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"regexp"
	"strings"
)

// Mask is what every redacted secret is replaced with.
const Mask = "xxxxx"

// minSecret is the shortest secret replaced: a shorter one would mask
// common words and numbers in a message, and no real credential is so
// short.
const minSecret = 4

// userinfoInText matches the userinfo of scheme://userinfo@host in any text.
var userinfoInText = regexp.MustCompile(`://([^/@\s"']*)@`)

// Redactor removes from text the secrets it was given and every
// credential a URL carries in its user part. The zero Redactor knows no
// secret and redacts URLs only. It is a value: safe to copy and to use
// concurrently.
type Redactor struct {
	secrets []string
}

// New returns a Redactor for the given secrets; those shorter than four
// bytes are ignored.
func New(secrets ...string) Redactor {
	var r Redactor
	for _, s := range secrets {
		if len(s) >= minSecret {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// ForURL returns a Redactor that also knows the credentials in rawURL's
// user part: its password, and its user when that is not a plain user
// name (a token pasted there), even where a library quoted them in
// another form (go-git writes "***" for the password but keeps the user).
func (r Redactor) ForURL(rawURL string) Redactor {
	info, ok := URLUserinfo(rawURL)
	if !ok {
		return r
	}
	user, password, _ := strings.Cut(info, ":")
	more := []string{password}
	if !PlainUserName(user) {
		more = append(more, user)
	}
	out := New(more...)
	out.secrets = append(append([]string(nil), r.secrets...), out.secrets...)
	return out
}

// String returns s with every known secret and every URL credential
// replaced by Mask. It works on text, so a URL that does not even parse
// is redacted too.
func (r Redactor) String(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Mask)
	}
	return URLs(s)
}

// Error returns err with its message redacted (String), keeping the chain
// for errors.Is and errors.As; err itself when nothing changed.
func (r Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := r.String(msg); clean != msg {
		return &redactedError{msg: clean, err: err}
	}
	return err
}

// URLs replaces, in any text (an error, a log line), the password of
// every scheme://user:password@ URL, and a user part that is not a plain
// user name (a token pasted there), with Mask.
func URLs(s string) string {
	return userinfoInText.ReplaceAllStringFunc(s, func(m string) string {
		user, _, hasPassword := strings.Cut(m[3:len(m)-1], ":")
		if !PlainUserName(user) {
			user = Mask
		}
		if hasPassword {
			return "://" + user + ":" + Mask + "@"
		}
		return "://" + user + "@"
	})
}

// Error is the zero Redactor's Error: URL credentials only.
func Error(err error) error { return Redactor{}.Error(err) }

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
