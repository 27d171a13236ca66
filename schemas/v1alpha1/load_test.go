// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const validConfig = `apiVersion: mcs-gitops.io/v1alpha1
kind: ClusterSet
metadata:
  name: prod
spec:
  members:
  - name: east
    region: us-east
    zone: us-east-1a
    kubeconfig:
      path: /etc/mcs-gitops/east.yaml
      context: east-admin
  - name: west
    clusterID: west-1
    kubeconfig:
      secretRef:
        namespace: mcs-gitops
        name: west-kubeconfig
  render:
    serviceImportAPIVersion: v1beta1
`

func TestParseValidConfigAppliesDefaults(t *testing.T) {
	cs, err := Parse("clusterset.yaml", []byte(validConfig))
	require.NoError(t, err)
	require.Len(t, cs.Spec.Members, 2)
	east, west := cs.Spec.Members[0], cs.Spec.Members[1]
	assert.Equal(t, "default", east.Group)
	assert.Equal(t, ModeFlat, east.Mode)
	assert.Equal(t, "us-east/us-east-1a/default/east", east.Key())
	assert.Equal(t, "value", west.Kubeconfig.SecretRef.Key, "Cluster API kubeconfig Secrets keep the kubeconfig under 'value'")
	assert.Equal(t, ServiceImportV1Beta1, cs.Spec.Render.ServiceImportAPIVersion)
	assert.False(t, cs.Spec.Render.CreateMissingNamespaces)
}

// A gateway declares its TCP listeners in ListenerSets unless the config
// says Gateway, so configs written before tcpListeners render as before.
func TestParseGatewayTCPListeners(t *testing.T) {
	gw := func(extra string) string {
		return strings.Replace(validConfig, "  - name: west\n",
			"  - name: west\n    gateway:\n      host: gw.example.com\n      namespace: gw\n      name: east-west\n"+extra, 1)
	}
	cs, err := Parse("c.yaml", []byte(gw("")))
	require.NoError(t, err)
	assert.Equal(t, TCPListenersListenerSet, cs.Spec.Members[1].Gateway.TCPListeners)
	cs, err = Parse("c.yaml", []byte(gw("      tcpListeners: Gateway\n")))
	require.NoError(t, err)
	assert.Equal(t, TCPListenersGateway, cs.Spec.Members[1].Gateway.TCPListeners)
	assert.Nil(t, cs.Spec.Members[0].Gateway, "a member without a gateway gets none by default")
}

func TestParseDefaultsServiceImportVersion(t *testing.T) {
	cs, err := Parse("c.yaml", []byte(strings.Replace(validConfig, "    serviceImportAPIVersion: v1beta1\n", "", 1)))
	require.NoError(t, err)
	assert.Equal(t, ServiceImportV1Alpha1, cs.Spec.Render.ServiceImportAPIVersion)
}

// Each bad config must produce an error naming the file, the line and the
// field, so a user can go straight to the mistake.
func TestParseRejectsBadConfig(t *testing.T) {
	cases := []struct {
		name string
		edit func(string) string
		want []string
	}{
		{"unknown field", func(s string) string { return strings.Replace(s, "    region: us-east", "    regoin: us-east", 1) },
			[]string{"cs.yaml:8:", "spec.members[0].regoin", "unknown field"}},
		{"case typo suggests the field", func(s string) string { return strings.Replace(s, "    clusterID: west-1", "    clusterId: west-1", 1) },
			[]string{"cs.yaml:14:", `did you mean "clusterID"`}},
		{"duplicate member name", func(s string) string { return strings.Replace(s, "- name: west", "- name: east", 1) },
			[]string{"cs.yaml:13:", "spec.members[1].name", `duplicate member name "east"`}},
		{"duplicate cluster ID", func(s string) string { return strings.Replace(s, "clusterID: west-1", "clusterID: east", 1) },
			[]string{"cs.yaml:14:", "spec.members[1].clusterID", "already used"}},
		{"invalid DNS label", func(s string) string { return strings.Replace(s, "- name: west", "- name: West_1", 1) },
			[]string{"cs.yaml:13:", "spec.members[1].name", "not a valid DNS label"}},
		{"wrong kind", func(s string) string { return strings.Replace(s, "kind: ClusterSet", "kind: Cluster", 1) },
			[]string{"cs.yaml:2:", "kind", "must be ClusterSet"}},
		{"duplicate key", func(s string) string { return strings.Replace(s, "  name: prod\n", "  name: prod\n  name: prod2\n", 1) },
			[]string{"cs.yaml:5:", "metadata.name", "duplicate key (first at line 4)"}},
		{"two kubeconfig sources", func(s string) string {
			return strings.Replace(s, "      context: east-admin\n", "      context: east-admin\n      inCluster: true\n", 1)
		}, []string{"cs.yaml:10:", "spec.members[0].kubeconfig", "only one of"}},
		{"integer expected", func(s string) string {
			return strings.Replace(s, "  - name: west\n", "  - name: west\n    gateway:\n      host: gw.example.com\n      port: eighty\n", 1)
		}, []string{"cs.yaml:16:", "spec.members[1].gateway.port", "expected an integer"}},
		{"unknown tcpListeners", func(s string) string {
			return strings.Replace(s, "  - name: west\n", "  - name: west\n    gateway:\n      host: gw.example.com\n      namespace: gw\n      name: east-west\n      tcpListeners: Listener\n", 1)
		}, []string{"cs.yaml:18:", "spec.members[1].gateway.tcpListeners", `must be ListenerSet or Gateway, got "Listener"`}},
		{"unknown render version", func(s string) string { return strings.Replace(s, "v1beta1", "v2", 1) },
			[]string{"cs.yaml:20:", "spec.render.serviceImportAPIVersion", "must be v1alpha1 or v1beta1"}},
		{"no members", func(s string) string { return s[:strings.Index(s, "  members:")] + "  members: []\n" },
			[]string{"cs.yaml:6:", "spec.members", "at least one member"}},
		{"malformed YAML", func(s string) string { return s + "  : : [\n" },
			[]string{"cs.yaml", "not valid YAML"}},
		{"two documents", func(s string) string { return s + "---\nkind: ClusterSet\n" },
			[]string{"cs.yaml:21:", "more than one YAML document"}},
		{"member label invalid", func(s string) string {
			return strings.Replace(s, "    region: us-east\n", "    region: us-east\n    labels: {\"bad key!\": x}\n", 1)
		}, []string{"cs.yaml:9:", "spec.members[0].labels", `label key "bad key!"`}},
		{"reach names a member that is not one", func(s string) string {
			return s + "  reach:\n    namespaces:\n    - name: shop\n      members: {names: [east, north]}\n"
		}, []string{"cs.yaml:24:", "spec.reach.namespaces[0].members.names[1]", `"north" is not a member of the ClusterSet`}},
		{"reach lists a namespace twice", func(s string) string {
			return s + "  reach:\n    namespaces:\n    - name: shop\n    - name: shop\n"
		}, []string{"cs.yaml:24:", "spec.reach.namespaces[1].name", `namespace "shop" is already listed at spec.reach.namespaces[0]`}},
		{"reach service importers by a bad label", func(s string) string {
			return s + "  reach:\n    namespaces:\n    - name: shop\n      services:\n      - name: cart\n        importers: {matchLabels: {env: \"no spaces\"}}\n"
		}, []string{"spec.reach.namespaces[0].services[0].importers.matchLabels", `label env value "no spaces"`}},
		{"reach unlisted unknown", func(s string) string { return s + "  reach:\n    unlisted: some\n" },
			[]string{"cs.yaml:22:", "spec.reach.unlisted", `must be shared or none, got "some"`}},
		{"a member label under mcs-gitops.io/", func(s string) string {
			return strings.Replace(s, "  - name: east\n", "  - name: east\n    labels: {mcs-gitops.io/member: west}\n", 1)
		}, []string{"spec.members[0].labels", `label key "mcs-gitops.io/member": keys under mcs-gitops.io/ are mcs-gitops's own`}},
		{"rollout wave named twice", func(s string) string {
			return s + "  rollout:\n    waves:\n    - name: canary\n      members: {names: [east]}\n    - name: canary\n      members: {names: [west]}\n"
		}, []string{"spec.rollout.waves[1].name", `wave "canary" is already spec.rollout.waves[0]`}},
		{"rollout wave with a bad soak and an unknown member", func(s string) string {
			return s + "  rollout:\n    waves:\n    - name: canary\n      members: {names: [north]}\n      soak: soon\n"
		}, []string{"spec.rollout.waves[0].soak", `"soon" is not a duration`, `spec.rollout.waves[0].members.names[0]`}},
		{"rollout stage unknown", func(s string) string { return s + "  rollout:\n    stage: [Everything]\n" },
			[]string{"cs.yaml:22:", "spec.rollout.stage[0]", `unknown kind "Everything"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("cs.yaml", []byte(tc.edit(validConfig)))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// A credential pasted into clusterset.yaml must be refused without the
// error repeating it: the error could end up in a CI log.
func TestParseRefusesInlineCredentialsWithoutEchoingThem(t *testing.T) {
	const secret = "c2VjcmV0LXRva2VuLXZhbHVlLXRoYXQtbXVzdC1uZXZlci1sZWFr"
	cases := map[string]string{
		"token field": strings.Replace(validConfig, "      context: east-admin\n",
			"      context: east-admin\n      token: "+secret+"\n", 1),
		"kubeconfig pasted into path": strings.Replace(validConfig, "      path: /etc/mcs-gitops/east.yaml\n",
			"      path: |\n        apiVersion: v1\n        clusters: []\n        users:\n        - user:\n            client-key-data: "+secret+"\n", 1),
		"PEM key in a name": strings.Replace(validConfig, "name: west-kubeconfig",
			"name: \"-----BEGIN RSA PRIVATE KEY-----"+secret+"\"", 1),
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("cs.yaml", []byte(cfg))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "credential")
			assert.NotContains(t, err.Error(), secret)
			assert.NotContains(t, err.Error(), "BEGIN RSA")
		})
	}
}

// A token pasted where a name, a path or a URL's user goes is refused
// without being repeated: forges accept a token as the URL's user part, and
// a token pasted into kubeconfig.path would be committed like any value.
func TestParseRefusesTokensInAnyFieldWithoutEchoingThem(t *testing.T) {
	const ghToken = "ghp_Zq4x7Lk2Wm9Rt3Vb8Nc1Yd6Hf5Gj0Ps2Qa7E"
	const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl"
	withGit := func(url string) string {
		return validConfig + "  git:\n    url: " + url + "\n"
	}
	cases := map[string]struct{ cfg, secret string }{
		"token as the Git URL's user":     {withGit("https://" + ghToken + "@git.example.com/platform/mcs.git"), ghToken},
		"JWT as the Git URL's user":       {withGit("https://" + jwt + "@git.example.com/platform/mcs.git"), jwt},
		"token pasted as kubeconfig.path": {strings.Replace(validConfig, "path: /etc/mcs-gitops/east.yaml", "path: "+ghToken, 1), ghToken},
		"JWT as a context name":           {strings.Replace(validConfig, "context: east-admin", "context: "+jwt, 1), jwt},
		"opaque token as a Secret name":   {strings.Replace(validConfig, "name: west-kubeconfig", "name: Xk9pQ2mR7vT4wL8nB3cZ6yH1jF5gD0sA", 1), "Xk9pQ2mR7vT4wL8nB3cZ6yH1jF5gD0sA"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("cs.yaml", []byte(c.cfg))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "credential")
			assert.NotContains(t, err.Error(), c.secret)
			assert.NotContains(t, err.Error(), c.secret[:12], "not even in part")
		})
	}
	// Plain user names in a URL, and names and paths, are fine.
	for _, url := range []string{"https://git@git.example.com/p/mcs.git", "https://oauth2@gitlab.example.com/p/mcs.git",
		"ssh://git@github.com/org/mcs.git", "https://x-access-token@github.com/org/mcs.git", "/srv/git/mcs.git"} {
		_, err := Parse("cs.yaml", []byte(withGit(url)))
		require.NoError(t, err, url)
	}
}

func TestLoadFileNamesMissingFile(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nope.yaml")
}

func TestDemoConfigLoads(t *testing.T) {
	cs, err := LoadFile("../../fixtures/demo/clusterset.yaml")
	require.NoError(t, err)
	assert.Len(t, cs.Spec.Members, 3)
}

// The checked-in JSON Schema must match the Go types; `make generate`
// refreshes it.
func TestJSONSchemaIsCurrent(t *testing.T) {
	docs, err := FieldDocs(".")
	require.NoError(t, err)
	want, err := JSONSchema(docs)
	require.NoError(t, err)
	have, err := os.ReadFile(filepath.Join("..", "..", SchemaFile))
	require.NoError(t, err)
	require.Equal(t, string(want), string(have), "%s is stale: run `make generate`", SchemaFile)
	assert.Contains(t, string(have), `"description": "Name of the member, a DNS label, unique in the ClusterSet.`)
}
