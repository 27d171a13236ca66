package gitsync

import (
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
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

// redact removes a password from a URL for messages.
// It works on text, so a URL that does not even parse is redacted too.
func (r *Repo) redact(raw string) string {
	return r.scrubString(urlPassword.ReplaceAllString(raw, "${1}xxxxx@"))
}

// urlPassword matches the "user:password@" of scheme://user:password@host.
var urlPassword = regexp.MustCompile(`(://[^/@:]*:)[^/@]*@`)

func (r *Repo) scrubString(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, "xxxxx")
	}
	if m := urlPassword.FindStringSubmatch(r.opts.URL); m != nil {
		if p := strings.TrimSuffix(strings.TrimPrefix(m[0], m[1]), "@"); p != "" {
			s = strings.ReplaceAll(s, p, "xxxxx")
		}
	}
	return s
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
