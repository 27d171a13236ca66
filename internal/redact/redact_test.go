// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"fmt"
	"io"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestURLs(t *testing.T) {
	for in, want := range map[string]string{
		`Get "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@git.example.com/x.git": EOF`: `Get "https://xxxxx@git.example.com/x.git": EOF`,
		"clone https://bot:hunter2@git.example.com/x.git failed":                            "clone https://bot:xxxxx@git.example.com/x.git failed",
		"https://git@git.example.com/x.git and ssh://git@host/x":                            "https://git@git.example.com/x.git and ssh://git@host/x",
		"no url here, only a@b": "no url here, only a@b",
		"https://eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl@k8s.example.com:6443/api": "https://xxxxx@k8s.example.com:6443/api",
	} {
		assert.Equal(t, want, URLs(in))
	}
	err := Error(fmt.Errorf("member %q: %w", "a", &url.Error{Op: "Get", URL: "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@h/api", Err: io.EOF}))
	assert.NotContains(t, err.Error(), "ghp_")
	assert.ErrorIs(t, err, io.EOF, "the chain is kept")
}

// A Redactor masks the secrets it holds wherever a library quoted them,
// and the credentials of the URL it was made for even in the form a
// transport rewrote (go-git writes "***" for the password but keeps the
// user); a secret too short to be one is left alone.
func TestRedactor(t *testing.T) {
	const tok = "s3cr3t-t0ken-value"
	r := New(tok, "abc").ForURL("https://ghp_abcdefghijklmnopqrstuvwxyz0123456789:hunter22@git.example.com/x.git")
	msg := "auth " + tok + " failed for https://ghp_abcdefghijklmnopqrstuvwxyz0123456789:***@git.example.com/x.git (password hunter22, abc)"
	got := r.String(msg)
	for _, secret := range []string{tok, "ghp_", "hunter22"} {
		assert.NotContains(t, got, secret)
	}
	assert.Contains(t, got, "abc", "a three-byte secret is too short to mask")

	plain := Redactor{}.ForURL("https://git:hunter22@host/x.git")
	assert.Equal(t, "user git, password xxxxx", plain.String("user git, password hunter22"), "a plain user name is kept")

	base := fmt.Errorf("push: %w", io.ErrUnexpectedEOF)
	assert.Same(t, base, r.Error(base), "nothing to redact: the error itself")
	wrapped := r.Error(fmt.Errorf("push %s: %w", tok, io.ErrUnexpectedEOF))
	assert.NotContains(t, wrapped.Error(), tok)
	assert.ErrorIs(t, wrapped, io.ErrUnexpectedEOF, "the chain is kept")
	assert.NoError(t, r.Error(nil))
}
