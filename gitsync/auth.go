// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// AuthFrom builds the transport credentials for url from the config's
// references, reading each secret through read (environment, file or
// management-cluster Secret: the caller decides how).
//
// https with a token gives basic auth (username default "git"); ssh needs
// sshKey and knownHosts, and host keys are always checked against
// knownHosts. No auth configured gives nil (anonymous https, ssh agent,
// local paths). Errors name the source of a secret, never its value.
func AuthFrom(a v1alpha1.GitAuth, url string, read func(*v1alpha1.CredentialSource) ([]byte, error)) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return nil, fmt.Errorf("git URL %s is not a path, https, ssh or user@host:path URL", redact.Redactor{}.ForURL(url).String(url))
	}
	switch ep.Protocol {
	case "http", "https":
		if a.SSHKey != nil || a.KnownHosts != nil {
			return nil, fmt.Errorf("git auth: sshKey and knownHosts apply to ssh URLs, and the URL is %s", ep.Protocol)
		}
		if a.Token == nil {
			return nil, nil
		}
		tok, err := readSecret(read, a.Token, "token")
		if err != nil {
			return nil, err
		}
		user := a.Username
		if user == "" {
			user = v1alpha1.DefaultGitUsername
		}
		return &http.BasicAuth{Username: user, Password: strings.TrimSpace(string(tok))}, nil
	case "ssh":
		if a.Token != nil {
			return nil, fmt.Errorf("git auth: token applies to https URLs, and the URL is ssh")
		}
		if a.SSHKey == nil {
			if a.KnownHosts != nil {
				return nil, fmt.Errorf("git auth: knownHosts is set without sshKey")
			}
			return nil, nil
		}
		if a.KnownHosts == nil {
			return nil, fmt.Errorf("git auth: knownHosts is required with sshKey: the server's host key is always checked")
		}
		return sshAuth(ep, a, read)
	default:
		// Local paths and file:// need no credentials; a configured auth
		// is for the real remote and is simply not used here.
		return nil, nil
	}
}

func sshAuth(ep *transport.Endpoint, a v1alpha1.GitAuth, read func(*v1alpha1.CredentialSource) ([]byte, error)) (transport.AuthMethod, error) {
	key, err := readSecret(read, a.SSHKey, "sshKey")
	if err != nil {
		return nil, err
	}
	user := ep.User
	if user == "" {
		user = v1alpha1.DefaultGitUsername
	}
	keys, err := gitssh.NewPublicKeys(user, key, "")
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, fmt.Errorf("git auth: the sshKey from %s is passphrase-protected; use a key without a passphrase", a.SSHKey.Describe())
		}
		// Parser errors describe the format, not the key; still, say only
		// what kind of problem it is.
		return nil, fmt.Errorf("git auth: the sshKey from %s is not a usable private key", a.SSHKey.Describe())
	}
	hosts, err := readSecret(read, a.KnownHosts, "knownHosts")
	if err != nil {
		return nil, err
	}
	db, err := knownHostsDB(hosts)
	if err != nil {
		return nil, fmt.Errorf("git auth: knownHosts from %s: %w", a.KnownHosts.Describe(), err)
	}
	port := ep.Port
	if port == 0 {
		port = 22
	}
	keys.HostKeyCallback = db.HostKeyCallback()
	keys.HostKeyAlgorithms = db.HostKeyAlgorithms(net.JoinHostPort(ep.Host, strconv.Itoa(port)))
	return keys, nil
}

// knownHostsDB parses known_hosts content. The parser reads files, so the
// (public) content goes through a temporary file removed at once.
func knownHostsDB(data []byte) (*knownhosts.HostKeyDB, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("is empty")
	}
	f, err := os.CreateTemp("", "mcs-gitops-known-hosts")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	db, err := gitssh.NewKnownHostsDb(f.Name())
	if err != nil {
		return nil, fmt.Errorf("not a known_hosts file: %s", strings.ReplaceAll(err.Error(), f.Name(), "known_hosts"))
	}
	return db, nil
}

// readSecret is CredentialSource.Read with this file's error prefix.
func readSecret(read func(*v1alpha1.CredentialSource) ([]byte, error), src *v1alpha1.CredentialSource, field string) ([]byte, error) {
	b, err := src.Read(read, field)
	if err != nil {
		return nil, fmt.Errorf("git auth: %w", err)
	}
	return b, nil
}

// authSecrets lists the strings of an auth method that must never appear
// in an error or log line.
func authSecrets(a transport.AuthMethod) []string {
	switch a := a.(type) {
	case *http.BasicAuth:
		return []string{a.Password}
	case *http.TokenAuth:
		return []string{a.Token}
	}
	return nil
}
