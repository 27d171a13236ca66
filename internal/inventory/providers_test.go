// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

const fullProviderFile = `{
  "providers": [
    {
      "name": "google",
      "execConfig": {
        "command": "/usr/bin/gke-gcloud-auth-plugin",
        "args": ["--use_application_default_credentials"],
        "env": [{"name": "CLOUDSDK_CORE_PROJECT", "value": "p1"}],
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "provideClusterInfo": true,
        "installHint": "install the gke plugin",
        "interactiveMode": "IfAvailable"
      },
      "profileSourcedCLIArgsPolicy": "Append",
      "profileSourcedEnvVarsPolicy": "Replace"
    },
    {
      "name": "secretreader",
      "execConfig": {"command": "./bin/secretreader-plugin", "args": null, "env": null, "apiVersion": "client.authentication.k8s.io/v1", "provideClusterInfo": true}
    }
  ]
}`

func TestParseProvidersReadsEveryField(t *testing.T) {
	f, err := ParseProviders("providers.json", []byte(fullProviderFile))
	require.NoError(t, err)
	require.Len(t, f.Providers, 2)
	assert.Equal(t, Provider{
		Name: "google",
		ExecConfig: &clientcmdv1.ExecConfig{
			Command:            "/usr/bin/gke-gcloud-auth-plugin",
			Args:               []string{"--use_application_default_credentials"},
			Env:                []clientcmdv1.ExecEnvVar{{Name: "CLOUDSDK_CORE_PROJECT", Value: "p1"}},
			APIVersion:         ExecAPIVersionV1beta1,
			ProvideClusterInfo: true,
			InstallHint:        "install the gke plugin",
			InteractiveMode:    clientcmdv1.IfAvailableExecInteractiveMode,
		},
		ProfileSourcedCLIArgsPolicy: CLIArgsAppend,
		ProfileSourcedEnvVarsPolicy: EnvVarsReplace,
	}, f.Providers[0])
	// Upstream's example file: policies absent mean Ignore.
	assert.Equal(t, "secretreader", f.Providers[1].Name)
	assert.Empty(t, f.Providers[1].ProfileSourcedCLIArgsPolicy)
	assert.Empty(t, f.Providers[1].ProfileSourcedEnvVarsPolicy)
}

func TestParseProvidersReportsEveryProblemAtOnce(t *testing.T) {
	const file = `{"providers": [
	  {"name": "", "execConfig": {"command": "a"}},
	  {"name": "nocfg"},
	  {"name": "dup", "execConfig": {"command": "a"}},
	  {"name": "dup", "execConfig": {"command": " ", "apiVersion": "client.authentication.k8s.io/v1alpha1", "interactiveMode": "Always"},
	   "profileSourcedCLIArgsPolicy": "Prepend", "profileSourcedEnvVarsPolicy": "Merge"},
	  {"name": "envs", "execConfig": {"command": "a", "interactiveMode": "Sometimes", "env": [
	    {"name": "", "value": "v0"}, {"name": "A", "value": "v1"}, {"name": "A", "value": "v2"}]}}
	]}`
	_, err := ParseProviders("conf/providers.json", []byte(file))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`providers[0] "": name is empty`,
		`providers[1] "nocfg": execConfig is missing`,
		`providers[3] "dup": name already used by providers[2]`,
		`providers[3] "dup": execConfig.command is empty`,
		`providers[3] "dup": execConfig.apiVersion "client.authentication.k8s.io/v1alpha1" is not`,
		`providers[3] "dup": execConfig.interactiveMode Always`,
		`providers[3] "dup": profileSourcedCLIArgsPolicy "Prepend"`,
		`providers[3] "dup": profileSourcedEnvVarsPolicy "Merge"`,
		`providers[4] "envs": execConfig.interactiveMode "Sometimes"`,
		`providers[4] "envs": execConfig.env[0]: name is empty`,
		`providers[4] "envs": execConfig.env[2] "A": set twice`,
	} {
		assert.Contains(t, msg, want)
	}
	lines := strings.Split(msg, "\n")
	assert.Len(t, lines, 11)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "provider file conf/providers.json: providers["), l)
	}
	for _, v := range []string{"v0", "v1", "v2"} {
		assert.NotContains(t, msg, `"`+v+`"`)
	}
}

func TestParseProvidersRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
		secret     string
	}{
		{name: "empty object", file: `{}`, want: []string{"no providers"}},
		{name: "empty list", file: `{"providers": []}`, want: []string{"no providers"}},
		{name: "null", file: `null`, want: []string{"no providers"}},
		{name: "unknown top-level field", file: `{"providers": [{"name": "a", "execConfig": {"command": "c"}}], "version": 1}`,
			want: []string{`unknown field "version"`}},
		{name: "field in the wrong case", file: `{"providers": [{"name": "a", "execConfig": {"command": "c", "Args": ["x"]}}]}`,
			want: []string{`unknown field "providers[0].execConfig.Args"`}},
		{name: "duplicate field", file: `{"providers": [{"name": "a", "name": "b", "execConfig": {"command": "c"}}]}`,
			want: []string{`duplicate field "providers[0].name"`}},
		{name: "execConfig field of the internal type", file: `{"providers": [{"name": "a", "execConfig": {"command": "c", "config": {}}}]}`,
			want: []string{`unknown field "providers[0].execConfig.config"`}},
		{name: "trailing data", file: `{"providers": [{"name": "a", "execConfig": {"command": "c"}}]}
{"providers": []}`, want: []string{"invalid JSON at line 2, column 1 (byte offset 63)"}},
		{name: "syntax error next to a secret",
			file: "{\"providers\": [{\"name\": \"a\", \"execConfig\": {\"command\": \"c\",\n \"env\": [{\"name\": \"T\", \"value\": \"hunter2\"X}]}}]}",
			want: []string{"invalid JSON at line 2, column 42 (byte offset 101)"}, secret: "hunter2"},
		{name: "number where a string is expected",
			file: `{"providers": [{"name": "a", "execConfig": {"command": "c", "env": [{"name": "PIN", "value": 84629173}]}}]}`,
			want: []string{"field providers.execConfig.env.value (value ending at line 1, column 101): a JSON number where string is expected"}, secret: "84629173"},
		{name: "value in an env name",
			file: `{"providers": [{"name": "a", "execConfig": {"command": "c", "env": [{"name": "TOKEN=hunter2", "value": ""}]}}]}`,
			want: []string{`providers[0] "a": execConfig.env[0]: name holds '=' or NUL`}, secret: "hunter2"},
		{name: "not an object", file: `[]`, want: []string{"a JSON array where"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseProviders("p.json", []byte(tc.file))
			require.Error(t, err)
			assert.Nil(t, f)
			assert.Contains(t, err.Error(), "provider file p.json: ")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			if tc.secret != "" {
				assert.NotContains(t, err.Error(), tc.secret)
			}
		})
	}
}

func TestLoadProviders(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "providers.json")
	require.NoError(t, os.WriteFile(path, []byte(fullProviderFile), 0o600))
	f, err := LoadProviders(path)
	require.NoError(t, err)
	assert.Len(t, f.Providers, 2)

	require.NoError(t, os.WriteFile(path, []byte(`{"providers": [{"name": "x"}]}`), 0o600))
	_, err = LoadProviders(path)
	require.ErrorContains(t, err, "provider file "+path+`: providers[0] "x": execConfig is missing`)

	missing := filepath.Join(dir, "absent.json")
	_, err = LoadProviders(missing)
	require.ErrorContains(t, err, missing)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
