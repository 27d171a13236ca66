package v1alpha1

import (
	"fmt"
	"io"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		`Get "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@git.example.com/x.git": EOF`: `Get "https://xxxxx@git.example.com/x.git": EOF`,
		"clone https://bot:hunter2@git.example.com/x.git failed":                            "clone https://bot:xxxxx@git.example.com/x.git failed",
		"https://git@git.example.com/x.git and ssh://git@host/x":                            "https://git@git.example.com/x.git and ssh://git@host/x",
		"no url here, only a@b": "no url here, only a@b",
		"https://eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl@k8s.example.com:6443/api": "https://xxxxx@k8s.example.com:6443/api",
	} {
		assert.Equal(t, want, RedactURLs(in))
	}
	err := RedactError(fmt.Errorf("member %q: %w", "a", &url.Error{Op: "Get", URL: "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@h/api", Err: io.EOF}))
	assert.NotContains(t, err.Error(), "ghp_")
	assert.ErrorIs(t, err, io.EOF, "the chain is kept")
}
