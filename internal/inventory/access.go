// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

// Extension names a profile's cluster may carry.
const (
	// ExtensionExec is client-go's reserved per-cluster exec extension
	// (SIG Auth): its value reaches the plugin as ExecCredential
	// spec.cluster.config when the provider sets provideClusterInfo.
	ExtensionExec = "client.authentication.k8s.io/exec"
	// ExtensionAdditionalArgs (KEP-5339) holds a JSON array of strings.
	ExtensionAdditionalArgs = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
	// ExtensionAdditionalEnvs (KEP-5339) holds a JSON object of
	// variable name to string value.
	ExtensionAdditionalEnvs = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
)

// Config builds the rest.Config that reaches the profile's cluster: the
// first provider of the file, in file order, whose name the profile
// offers, with that access provider's cluster. The exec config is built
// afresh on every call, so callers may change what they get and call
// concurrently.
func (f *ProviderFile) Config(profile *Profile) (*rest.Config, error) {
	if profile == nil {
		return nil, errors.New("no ClusterProfile")
	}
	if f == nil || len(f.Providers) == 0 {
		return nil, fmt.Errorf("ClusterProfile %s: the provider file has no providers", profile.Ref())
	}
	offered := profile.Providers()
	byName := make(map[string]*AccessProvider, len(offered))
	for i := range offered {
		if _, dup := byName[offered[i].Name]; !dup {
			byName[offered[i].Name] = &offered[i]
		}
	}
	for i := range f.Providers {
		p := &f.Providers[i]
		if a, ok := byName[p.Name]; ok {
			cfg, err := p.config(a)
			if err != nil {
				return nil, fmt.Errorf("ClusterProfile %s: access provider %q: %w", profile.Ref(), p.Name, err)
			}
			return cfg, nil
		}
	}
	offers := make([]string, 0, len(offered))
	for _, a := range offered {
		offers = append(offers, a.Name)
	}
	has := make([]string, 0, len(f.Providers))
	for _, p := range f.Providers {
		has = append(has, p.Name)
	}
	return nil, fmt.Errorf("ClusterProfile %s: no access provider the provider file knows: the profile offers %q, the file has %q", profile.Ref(), offers, has)
}

func (p *Provider) config(a *AccessProvider) (*rest.Config, error) {
	// A file built in code skipped ParseProviders.
	if errs := p.problems(); len(errs) > 0 {
		return nil, fmt.Errorf("provider file: %w", errors.Join(errs...))
	}
	c := &a.Cluster
	cfg := &rest.Config{}
	if err := setServer(cfg, c); err != nil {
		return nil, err
	}
	exts := map[string][]byte{}
	for _, e := range c.Extensions {
		if _, dup := exts[e.Name]; dup {
			// clientcmd refuses it too; which one wins is not defined.
			return nil, fmt.Errorf("cluster extension %s is listed twice", e.Name)
		}
		raw, err := extensionJSON(e)
		if err != nil {
			return nil, err
		}
		exts[e.Name] = raw
	}
	exec, err := p.execConfig(exts)
	if err != nil {
		return nil, err
	}
	cfg.ExecProvider = exec
	return cfg, nil
}

// setServer fills what the cluster says about reaching it. Error messages
// quote neither URL (either may carry user:password) nor CA bytes.
func setServer(cfg *rest.Config, c *clientcmdv1.Cluster) error {
	if c.Server == "" {
		return errors.New("cluster.server is empty")
	}
	u, err := url.Parse(c.Server)
	switch {
	case err != nil:
		return errors.New("cluster.server is not a URL")
	case u.Scheme != "https":
		return fmt.Errorf("cluster.server has scheme %q, not https: credentials would travel in clear", u.Scheme)
	case u.Host == "":
		return errors.New("cluster.server has no host")
	case u.User != nil:
		return errors.New("cluster.server holds user information: credentials come from the exec plugin only")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("cluster.server holds a query or fragment")
	}
	if c.InsecureSkipTLSVerify {
		return errors.New("cluster.insecure-skip-tls-verify is true: refusing to talk to a member whose certificate is not verified")
	}
	if c.CertificateAuthority != "" {
		// A file path in the profile would make us read our own files.
		return errors.New("cluster.certificate-authority names a file: a profile must carry certificate-authority-data")
	}
	if len(c.CertificateAuthorityData) > 0 {
		// client-go would only fail at the first request, with a vaguer
		// message.
		if !x509.NewCertPool().AppendCertsFromPEM(c.CertificateAuthorityData) {
			return errors.New("cluster.certificate-authority-data holds no PEM certificate")
		}
		cfg.CAData = bytes.Clone(c.CertificateAuthorityData)
	}
	cfg.Host = c.Server
	cfg.ServerName = c.TLSServerName
	cfg.DisableCompression = c.DisableCompression
	if c.ProxyURL != "" {
		// As clientcmd does; unset leaves the environment's proxy in force.
		pu, err := url.Parse(c.ProxyURL)
		if err != nil {
			return errors.New("cluster.proxy-url is not a URL")
		}
		switch pu.Scheme {
		case "http", "https", "socks5":
		default:
			return fmt.Errorf("cluster.proxy-url has scheme %q, not http, https or socks5", pu.Scheme)
		}
		cfg.Proxy = http.ProxyURL(pu)
	}
	return nil
}

// extensionJSON is an extension's value as JSON. A profile read from the
// API server always has Raw JSON; Object only comes from Go callers.
func extensionJSON(e clientcmdv1.NamedExtension) ([]byte, error) {
	raw := e.Extension.Raw
	if len(raw) == 0 && e.Extension.Object != nil {
		var err error
		if raw, err = json.Marshal(e.Extension.Object); err != nil {
			return nil, fmt.Errorf("cluster extension %s cannot be encoded as JSON", e.Name)
		}
	}
	if len(raw) > 0 && !json.Valid(raw) {
		return nil, fmt.Errorf("cluster extension %s is not valid JSON", e.Name)
	}
	return raw, nil
}

// execConfig converts the provider's exec config into a new value, sharing
// no slice with the file: client-go caches authenticators by the config's
// content, and appending to a shared Args would grow it on every call.
func (p *Provider) execConfig(exts map[string][]byte) (*clientcmdapi.ExecConfig, error) {
	in := p.ExecConfig
	out := &clientcmdapi.ExecConfig{
		Command:            in.Command,
		Args:               slices.Clone(in.Args),
		APIVersion:         in.APIVersion,
		InstallHint:        in.InstallHint,
		ProvideClusterInfo: in.ProvideClusterInfo,
		// A controller has no one at the terminal; IfAvailable would hand
		// the plugin our stdin.
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	if out.APIVersion == "" {
		// client-go refuses an empty apiVersion; v1 is the GA one.
		out.APIVersion = ExecAPIVersionV1
	}
	for _, e := range in.Env {
		out.Env = append(out.Env, clientcmdapi.ExecEnvVar{Name: e.Name, Value: e.Value})
	}
	if raw := exts[ExtensionExec]; len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		// rest.ConfigToExecCluster copies Config to the ExecCredential's
		// spec.cluster.config, and the runtime.Object to RawExtension
		// conversion passes a *runtime.Unknown's Raw through unchanged.
		out.Config = &runtime.Unknown{Raw: bytes.Clone(raw), ContentType: runtime.ContentTypeJSON}
	}

	switch p.ProfileSourcedCLIArgsPolicy {
	case CLIArgsAppend:
		if raw, ok := exts[ExtensionAdditionalArgs]; ok {
			var args []string
			if err := decodeExtension(raw, &args); err != nil {
				return nil, fmt.Errorf("cluster extension %s: %w", ExtensionAdditionalArgs, err)
			}
			out.Args = append(out.Args, args...)
		}
	case "", CLIArgsIgnore:
		// Not even decoded: the file chose not to depend on it.
	}

	switch p.ProfileSourcedEnvVarsPolicy {
	case EnvVarsAppendIfNotExists, EnvVarsReplace:
		raw, ok := exts[ExtensionAdditionalEnvs]
		if !ok {
			break
		}
		var vars map[string]string
		if err := decodeExtension(raw, &vars); err != nil {
			return nil, fmt.Errorf("cluster extension %s: %w", ExtensionAdditionalEnvs, err)
		}
		for name := range vars {
			if !validEnvName(name) {
				// Not quoted: the name may be "TOKEN=value".
				return nil, fmt.Errorf("cluster extension %s: a variable name is empty or holds '=' or NUL", ExtensionAdditionalEnvs)
			}
		}
		out.Env = mergeEnv(out.Env, vars, p.ProfileSourcedEnvVarsPolicy == EnvVarsReplace)
	case "", EnvVarsIgnore:
	}
	return out, nil
}

// decodeExtension decodes an extension strictly, reporting the kind of
// mistake and never the text.
func decodeExtension(raw []byte, v any) error {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	err := json.Unmarshal(raw, v)
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typ):
		kind, _, _ := strings.Cut(typ.Value, " ")
		return fmt.Errorf("malformed: a JSON %s where %s is expected", kind, typ.Type)
	default:
		return errors.New("malformed JSON")
	}
}

// mergeEnv keeps the file's order and appends the profile's other
// variables by name, so equal inputs give equal configs (and share one
// cached client-go authenticator).
func mergeEnv(env []clientcmdapi.ExecEnvVar, vars map[string]string, replace bool) []clientcmdapi.ExecEnvVar {
	inFile := map[string]bool{}
	for i := range env {
		inFile[env[i].Name] = true
		if v, ok := vars[env[i].Name]; ok && replace {
			env[i].Value = v
		}
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		if !inFile[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		env = append(env, clientcmdapi.ExecEnvVar{Name: n, Value: vars[n]})
	}
	return env
}
