// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

var testCAPEM = sync.OnceValue(func() []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
})

func ext(name, raw string) clientcmdv1.NamedExtension {
	return clientcmdv1.NamedExtension{Name: name, Extension: runtime.RawExtension{Raw: []byte(raw)}}
}

func cluster(exts ...clientcmdv1.NamedExtension) clientcmdv1.Cluster {
	return clientcmdv1.Cluster{
		Server:                   "https://member-1.example.com:6443",
		CertificateAuthorityData: testCAPEM(),
		Extensions:               exts,
	}
}

func testProfile(aps ...AccessProvider) *Profile {
	p := &Profile{}
	p.Namespace, p.Name = "fleet", "member-1"
	p.Status.AccessProviders = aps
	return p
}

func mustParse(t *testing.T, file string) *ProviderFile {
	t.Helper()
	f, err := ParseProviders("providers.json", []byte(file))
	require.NoError(t, err)
	return f
}

const policyFile = `{"providers": [{
  "name": "p",
  "execConfig": {"command": "plugin", "args": ["--file-arg"],
    "env": [{"name": "FILE_ONLY", "value": "f"}, {"name": "SHARED", "value": "from-file"}],
    "apiVersion": "client.authentication.k8s.io/v1", "provideClusterInfo": true},
  "profileSourcedCLIArgsPolicy": %q,
  "profileSourcedEnvVarsPolicy": %q}]}`

func TestConfigBuildsFromTheCluster(t *testing.T) {
	f := mustParse(t, `{"providers": [{"name": "p", "execConfig": {"command": "plugin", "interactiveMode": "IfAvailable", "provideClusterInfo": true, "installHint": "hint"}}]}`)
	c := cluster(ext(ExtensionExec, `{"audience": "member-1"}`))
	c.TLSServerName = "apiserver.internal"
	c.ProxyURL = "socks5://proxy.example.com:1080"
	c.DisableCompression = true
	cfg, err := f.Config(testProfile(AccessProvider{Name: "p", Cluster: c}))
	require.NoError(t, err)

	assert.Equal(t, "https://member-1.example.com:6443", cfg.Host)
	assert.Equal(t, testCAPEM(), cfg.CAData)
	assert.Equal(t, "apiserver.internal", cfg.ServerName, "upstream drops tls-server-name; we keep it")
	assert.False(t, cfg.Insecure)
	assert.True(t, cfg.DisableCompression)
	req, _ := http.NewRequest(http.MethodGet, cfg.Host, nil)
	proxy, err := cfg.Proxy(req)
	require.NoError(t, err)
	assert.Equal(t, "socks5://proxy.example.com:1080", proxy.String())

	assert.Equal(t, &clientcmdapi.ExecConfig{
		Command:            "plugin",
		APIVersion:         ExecAPIVersionV1,
		InstallHint:        "hint",
		ProvideClusterInfo: true,
		InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
		Config:             &runtime.Unknown{Raw: []byte(`{"audience": "member-1"}`), ContentType: runtime.ContentTypeJSON},
	}, cfg.ExecProvider)

	// What client-go hands the plugin as spec.cluster.
	ec, err := rest.ConfigToExecCluster(cfg)
	require.NoError(t, err)
	assert.Equal(t, "https://member-1.example.com:6443", ec.Server)
	assert.Equal(t, "apiserver.internal", ec.TLSServerName)
	assert.Equal(t, "socks5://proxy.example.com:1080", ec.ProxyURL)
	assert.Equal(t, &runtime.Unknown{Raw: []byte(`{"audience": "member-1"}`), ContentType: runtime.ContentTypeJSON}, ec.Config)
}

func TestConfigWithoutProxyLeavesTheEnvironmentsProxy(t *testing.T) {
	f := mustParse(t, `{"providers": [{"name": "p", "execConfig": {"command": "plugin", "apiVersion": "client.authentication.k8s.io/v1beta1"}}]}`)
	cfg, err := f.Config(testProfile(AccessProvider{Name: "p", Cluster: cluster()}))
	require.NoError(t, err)
	assert.Nil(t, cfg.Proxy)
	assert.Equal(t, ExecAPIVersionV1beta1, cfg.ExecProvider.APIVersion)
	assert.Nil(t, cfg.ExecProvider.Config)
}

func TestConfigChoosesTheFirstProviderInFileOrder(t *testing.T) {
	f := mustParse(t, `{"providers": [
	  {"name": "unknown-to-profile", "execConfig": {"command": "zero"}},
	  {"name": "b", "execConfig": {"command": "bee"}},
	  {"name": "a", "execConfig": {"command": "ay"}}]}`)
	ca, cb := cluster(), cluster()
	ca.Server, cb.Server = "https://a.example.com", "https://b.example.com"
	// The profile lists a first; the file's order decides.
	cfg, err := f.Config(testProfile(AccessProvider{Name: "a", Cluster: ca}, AccessProvider{Name: "b", Cluster: cb}))
	require.NoError(t, err)
	assert.Equal(t, "bee", cfg.ExecProvider.Command)
	assert.Equal(t, "https://b.example.com", cfg.Host)
}

func TestConfigFallsBackToCredentialProviders(t *testing.T) {
	f := mustParse(t, `{"providers": [{"name": "old", "execConfig": {"command": "plugin"}}]}`)
	p := testProfile()
	c := cluster()
	c.Server = "https://deprecated-field.example.com"
	p.Status.CredentialProviders = []AccessProvider{{Name: "old", Cluster: c}}
	cfg, err := f.Config(p)
	require.NoError(t, err)
	assert.Equal(t, "https://deprecated-field.example.com", cfg.Host)

	// accessProviders wins over a credentialProviders entry of the same name.
	c2 := cluster()
	c2.Server = "https://current-field.example.com"
	p.Status.AccessProviders = []AccessProvider{{Name: "old", Cluster: c2}}
	cfg, err = f.Config(p)
	require.NoError(t, err)
	assert.Equal(t, "https://current-field.example.com", cfg.Host)
}

func TestConfigNoCommonProvider(t *testing.T) {
	f := mustParse(t, `{"providers": [{"name": "google", "execConfig": {"command": "a"}}, {"name": "aws", "execConfig": {"command": "b"}}]}`)
	_, err := f.Config(testProfile(AccessProvider{Name: "azure", Cluster: cluster()}, AccessProvider{Name: "token-secret", Cluster: cluster()}))
	require.EqualError(t, err, `ClusterProfile fleet/member-1: no access provider the provider file knows: the profile offers ["azure" "token-secret"], the file has ["google" "aws"]`)
}

func TestConfigPolicies(t *testing.T) {
	exts := []clientcmdv1.NamedExtension{
		ext(ExtensionAdditionalArgs, `["--audience", "aud-1"]`),
		ext(ExtensionAdditionalEnvs, `{"SHARED": "from-profile", "Z_PROFILE": "z", "A_PROFILE": "a"}`),
	}
	env := func(kv ...string) []clientcmdapi.ExecEnvVar {
		var out []clientcmdapi.ExecEnvVar
		for i := 0; i < len(kv); i += 2 {
			out = append(out, clientcmdapi.ExecEnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	fileEnv := env("FILE_ONLY", "f", "SHARED", "from-file")
	for _, tc := range []struct {
		args, envs string
		wantArgs   []string
		wantEnv    []clientcmdapi.ExecEnvVar
	}{
		{args: "", envs: "", wantArgs: []string{"--file-arg"}, wantEnv: fileEnv},
		{args: "Ignore", envs: "Ignore", wantArgs: []string{"--file-arg"}, wantEnv: fileEnv},
		{args: "Append", envs: "Ignore", wantArgs: []string{"--file-arg", "--audience", "aud-1"}, wantEnv: fileEnv},
		{args: "Ignore", envs: "AppendIfNotExists", wantArgs: []string{"--file-arg"},
			wantEnv: env("FILE_ONLY", "f", "SHARED", "from-file", "A_PROFILE", "a", "Z_PROFILE", "z")},
		{args: "Append", envs: "Replace", wantArgs: []string{"--file-arg", "--audience", "aud-1"},
			wantEnv: env("FILE_ONLY", "f", "SHARED", "from-profile", "A_PROFILE", "a", "Z_PROFILE", "z")},
	} {
		t.Run(tc.args+"/"+tc.envs, func(t *testing.T) {
			f := mustParse(t, fmt.Sprintf(policyFile, tc.args, tc.envs))
			cfg, err := f.Config(testProfile(AccessProvider{Name: "p", Cluster: cluster(exts...)}))
			require.NoError(t, err)
			assert.Equal(t, tc.wantArgs, cfg.ExecProvider.Args)
			assert.Equal(t, tc.wantEnv, cfg.ExecProvider.Env)
		})
	}
}

func TestConfigIgnoredExtensionsAreNotRead(t *testing.T) {
	f := mustParse(t, fmt.Sprintf(policyFile, "Ignore", "Ignore"))
	cfg, err := f.Config(testProfile(AccessProvider{Name: "p", Cluster: cluster(
		ext(ExtensionAdditionalArgs, `{"not": "a list"}`),
		ext(ExtensionAdditionalEnvs, `["not", "an", "object"]`),
	)}))
	require.NoError(t, err)
	assert.Equal(t, []string{"--file-arg"}, cfg.ExecProvider.Args)
}

func TestConfigRefuses(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, tc := range []struct {
		name   string
		file   string // policyFile's policies, or a whole file
		mutate func(*clientcmdv1.Cluster)
		want   string
	}{
		{name: "insecure", mutate: func(c *clientcmdv1.Cluster) { c.InsecureSkipTLSVerify = true },
			want: "cluster.insecure-skip-tls-verify is true"},
		{name: "CA file", mutate: func(c *clientcmdv1.Cluster) { c.CertificateAuthority = "/etc/" + secret },
			want: "cluster.certificate-authority names a file"},
		{name: "CA bytes not PEM", mutate: func(c *clientcmdv1.Cluster) { c.CertificateAuthorityData = []byte(secret) },
			want: "cluster.certificate-authority-data holds no PEM certificate"},
		{name: "no server", mutate: func(c *clientcmdv1.Cluster) { c.Server = "" }, want: "cluster.server is empty"},
		{name: "http server", mutate: func(c *clientcmdv1.Cluster) { c.Server = "http://member-1.example.com" },
			want: `cluster.server has scheme "http", not https`},
		{name: "not a URL", mutate: func(c *clientcmdv1.Cluster) { c.Server = "https://" + secret + "\x7f" },
			want: "cluster.server is not a URL"},
		{name: "host only", mutate: func(c *clientcmdv1.Cluster) { c.Server = "member-1.example.com:6443" },
			want: "not https"},
		{name: "password in server", mutate: func(c *clientcmdv1.Cluster) { c.Server = "https://admin:" + secret + "@member-1.example.com" },
			want: "cluster.server holds user information"},
		{name: "bad proxy", mutate: func(c *clientcmdv1.Cluster) { c.ProxyURL = "ftp://u:" + secret + "@proxy" },
			want: `cluster.proxy-url has scheme "ftp"`},
		{name: "extension twice", mutate: func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(ExtensionExec, `{}`), ext(ExtensionExec, `{}`))
		}, want: "cluster extension client.authentication.k8s.io/exec is listed twice"},
		{name: "exec extension not JSON", mutate: func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(ExtensionExec, "audience: "+secret))
		}, want: "cluster extension client.authentication.k8s.io/exec is not valid JSON"},
		{name: "args not a list", file: fmt.Sprintf(policyFile, "Append", "Ignore"), mutate: func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(ExtensionAdditionalArgs, `{"token": "`+secret+`"}`))
		}, want: "cluster extension clusterprofiles.multicluster.x-k8s.io/exec/additional-args: malformed: a JSON object where []string is expected"},
		{name: "arg not a string", file: fmt.Sprintf(policyFile, "Append", "Ignore"), mutate: func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(ExtensionAdditionalArgs, `["--pin", 8462917]`))
		}, want: "additional-args: malformed: a JSON number where string is expected"},
		{name: "env value not a string", file: fmt.Sprintf(policyFile, "Ignore", "Replace"), mutate: func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(ExtensionAdditionalEnvs, `{"PIN": 8462917}`))
		}, want: "additional-envs: malformed: a JSON number where string is expected"},
		{name: "env name holds a value", file: fmt.Sprintf(policyFile, "Ignore", "AppendIfNotExists"), mutate: func(c *clientcmdv1.Cluster) {
			c.Extensions = append(c.Extensions, ext(ExtensionAdditionalEnvs, `{"TOKEN=`+secret+`": ""}`))
		}, want: "additional-envs: a variable name is empty or holds '=' or NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = fmt.Sprintf(policyFile, "", "")
			}
			f := mustParse(t, file)
			c := cluster()
			tc.mutate(&c)
			_, err := f.Config(testProfile(AccessProvider{Name: "p", Cluster: c}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), `ClusterProfile fleet/member-1: access provider "p": `)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), secret)
			assert.NotContains(t, err.Error(), "8462917")
			assert.NotContains(t, err.Error(), "BEGIN CERTIFICATE")
		})
	}
}

func TestConfigRefusesAProviderBuiltInCode(t *testing.T) {
	f := &ProviderFile{Providers: []Provider{{Name: "p", ProfileSourcedEnvVarsPolicy: "Merge"}}}
	_, err := f.Config(testProfile(AccessProvider{Name: "p", Cluster: cluster()}))
	require.ErrorContains(t, err, "execConfig is missing")
	require.ErrorContains(t, err, `profileSourcedEnvVarsPolicy "Merge"`)
}

func TestConfigSharesNothingWithFileOrProfile(t *testing.T) {
	f := mustParse(t, fmt.Sprintf(policyFile, "Append", "Replace"))
	profile := testProfile(AccessProvider{Name: "p", Cluster: cluster(
		ext(ExtensionExec, `{"audience":"a"}`),
		ext(ExtensionAdditionalArgs, `["--profile-arg"]`),
		ext(ExtensionAdditionalEnvs, `{"SHARED":"from-profile"}`),
	)})
	wantArgs := []string{"--file-arg", "--profile-arg"}

	first, err := f.Config(profile)
	require.NoError(t, err)
	second, err := f.Config(profile)
	require.NoError(t, err)
	assert.Equal(t, wantArgs, first.ExecProvider.Args)
	assert.Equal(t, wantArgs, second.ExecProvider.Args, "args must not pile up across calls")
	assert.Equal(t, first, second)

	first.ExecProvider.Args[0] = "changed"
	first.ExecProvider.Env[0].Value = "changed"
	first.ExecProvider.Env[1].Value = "changed"
	first.ExecProvider.Config.(*runtime.Unknown).Raw[2] = 'X'
	first.CAData[0] = 'X'
	assert.Equal(t, []string{"--file-arg"}, f.Providers[0].ExecConfig.Args)
	assert.Equal(t, []clientcmdv1.ExecEnvVar{{Name: "FILE_ONLY", Value: "f"}, {Name: "SHARED", Value: "from-file"}}, f.Providers[0].ExecConfig.Env)
	assert.Equal(t, `{"audience":"a"}`, string(profile.Status.AccessProviders[0].Cluster.Extensions[0].Extension.Raw))
	assert.Equal(t, testCAPEM(), profile.Status.AccessProviders[0].Cluster.CertificateAuthorityData)

	third, err := f.Config(profile)
	require.NoError(t, err)
	assert.Equal(t, second, third)

	// Concurrent calls, under -race, see no shared writes and agree.
	var wg sync.WaitGroup
	results := make([]*rest.Config, 16)
	errs := make([]error, len(results))
	for i := range results {
		wg.Go(func() { results[i], errs[i] = f.Config(profile) })
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i])
		assert.Equal(t, wantArgs, results[i].ExecProvider.Args)
		assert.Equal(t, second.ExecProvider, results[i].ExecProvider)
	}
}

// TestConfigRunsTheExecPlugin proves the whole path: a profile as the API
// server returns it, the rest.Config we build, client-go running a real
// plugin binary with the cluster info, and the bearer token reaching a TLS
// server that is only trusted through the profile's CA and server name.
func TestConfigRunsTheExecPlugin(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the test plugin:", err)
	}
	plugin := filepath.Join(t.TempDir(), "echoplugin")
	build := exec.Command(goTool, "build", "-o", plugin, "./testdata/echoplugin")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the plugin: %s", out)

	var mu sync.Mutex
	var auths []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	// The refused handshake below is expected; keep it out of the log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	f := mustParse(t, fmt.Sprintf(`{"providers": [{"name": "echo",
	  "execConfig": {"command": %q, "args": ["--from-file"], "env": [{"name": "ECHO_FILE", "value": "f"}],
	    "apiVersion": "client.authentication.k8s.io/v1", "provideClusterInfo": true, "interactiveMode": "IfAvailable"},
	  "profileSourcedCLIArgsPolicy": "Append", "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}]}`, plugin))

	// httptest's certificate is for 127.0.0.1 and example.com: the request
	// goes to the IP, so a name outside the certificate failing proves
	// tls-server-name is kept and used.
	profileNamed := func(serverName string) *Profile {
		doc := fmt.Sprintf(`{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
	  "metadata": {"namespace": "fleet", "name": "member-1"},
	  "spec": {"clusterManager": {"name": "test"}},
	  "status": {"accessProviders": [{"name": "echo", "cluster": {
	    "server": %q, "tls-server-name": %q, "certificate-authority-data": %q,
	    "extensions": [
	      {"name": "client.authentication.k8s.io/exec", "extension": {"audience": "member-1", "nested": {"n": 1}}},
	      {"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-args", "extension": ["--audience", "member-1"]},
	      {"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs", "extension": {"ECHO_PROFILE": "p", "ECHO_FILE": "ignored"}}
	    ]}}]}}`, srv.URL, serverName, base64.StdEncoding.EncodeToString(caPEM))
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON([]byte(doc)))
		profile, err := FromUnstructured(u)
		require.NoError(t, err)
		return profile
	}
	get := func(profile *Profile) error {
		cfg, err := f.Config(profile)
		require.NoError(t, err)
		client, err := rest.HTTPClientFor(cfg)
		require.NoError(t, err)
		resp, err := client.Get(srv.URL + "/version")
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return nil
	}

	err = get(profileNamed("not-in-the-certificate.example"))
	require.ErrorContains(t, err, "not not-in-the-certificate.example")
	require.NoError(t, get(profileNamed("example.com")))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, auths, 1)
	token, ok := strings.CutPrefix(auths[0], "Bearer echo.")
	require.True(t, ok, "Authorization header %q", auths[0])
	raw, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	var seen struct {
		APIVersion    string          `json:"apiVersion"`
		Server        string          `json:"server"`
		TLSServerName string          `json:"tlsServerName"`
		Config        json.RawMessage `json:"config"`
		Interactive   bool            `json:"interactive"`
		Args          []string        `json:"args"`
		Env           []string        `json:"env"`
	}
	require.NoError(t, json.Unmarshal(raw, &seen))
	assert.Equal(t, ExecAPIVersionV1, seen.APIVersion)
	assert.Equal(t, srv.URL, seen.Server)
	assert.Equal(t, "example.com", seen.TLSServerName)
	assert.JSONEq(t, `{"audience": "member-1", "nested": {"n": 1}}`, string(seen.Config))
	assert.False(t, seen.Interactive)
	assert.Equal(t, []string{"--from-file", "--audience", "member-1"}, seen.Args)
	assert.Equal(t, []string{"ECHO_FILE=f", "ECHO_PROFILE=p"}, seen.Env)
}
