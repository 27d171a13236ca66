package gitsync

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// authSecrets lists the strings of an auth method that must never appear
// in an error or log line.
func authSecrets(a transport.AuthMethod) []string {
	var s []string
	switch a := a.(type) {
	case *http.BasicAuth:
		s = append(s, a.Password)
	case *http.TokenAuth:
		s = append(s, a.Token)
	}
	out := s[:0]
	for _, v := range s {
		if len(v) >= 4 {
			out = append(out, v)
		}
	}
	return out
}

// scrubString removes every known secret from s: the auth method's, and
// whatever userinfo of the repository URL is not a plain user name, even
// where a transport quoted it in another form (go-git writes "***" for the
// password but keeps the user). It works on text, so a URL that does not
// even parse is redacted too.
func (r *Repo) scrubString(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, "xxxxx")
	}
	if info, ok := v1alpha1.URLUserinfo(r.opts.URL); ok {
		user, password, _ := strings.Cut(info, ":")
		if len(password) >= 4 {
			s = strings.ReplaceAll(s, password, "xxxxx")
		}
		if len(user) >= 4 && !v1alpha1.PlainUserName(user) {
			s = strings.ReplaceAll(s, user, "xxxxx")
		}
	}
	return v1alpha1.RedactURLs(s)
}

// scrub returns err with every known secret replaced. errors.Is and
// errors.As still see the original chain.
func (r *Repo) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := r.scrubString(msg); clean != msg {
		return &scrubbedError{msg: clean, err: err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
