// SPDX-License-Identifier: Apache-2.0

package credential

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/pkg/apis/clientauthentication/install"
)

func execInfo(apiVersion, spec string) string {
	return `{"apiVersion":"` + apiVersion + `","kind":"ExecCredential","spec":` + spec + `}`
}

// What client-go sends with provideClusterInfo and the extension set.
const clusterSpec = `{"cluster":{"server":"https://spoke-1.example:6443","certificate-authority-data":"Q0E=",` +
	`"config":{"clusterName":"spoke-1"}},"interactive":false}`

func TestParseRequest(t *testing.T) {
	for _, v := range []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"} {
		req, err := ParseRequest([]byte(execInfo(v, clusterSpec)))
		require.NoError(t, err, v)
		assert.Equal(t, Request{APIVersion: v, ClusterName: "spoke-1"}, req)
	}
}

func TestParseRequestRefuses(t *testing.T) {
	v1 := "client.authentication.k8s.io/v1"
	for _, tc := range []struct{ name, in, want string }{
		{"unset", "", "KUBERNETES_EXEC_INFO is not set"},
		{"not JSON", "{", "not an ExecCredential in JSON"},
		{"other kind", `{"apiVersion":"client.authentication.k8s.io/v1","kind":"Config"}`, `kind "Config": want kind ExecCredential`},
		{"other version", execInfo("client.authentication.k8s.io/v1alpha1", clusterSpec), `apiVersion "client.authentication.k8s.io/v1alpha1"`},
		{"no spec.cluster", execInfo(v1, `{"interactive":false}`), `set "provideClusterInfo": true`},
		{"no config", execInfo(v1, `{"cluster":{"server":"https://x"}}`), "has no spec.cluster.config: the ClusterProfile's access provider needs the cluster extension client.authentication.k8s.io/exec"},
		{"null config", execInfo(v1, `{"cluster":{"server":"https://x","config":null}}`), "has no spec.cluster.config"},
		{"config not an object", execInfo(v1, `{"cluster":{"server":"https://x","config":"spoke-1"}}`), "is not an object with clusterName"},
		{"no clusterName", execInfo(v1, `{"cluster":{"server":"https://x","config":{"name":"spoke-1"}}}`), "has no clusterName"},
		{"empty clusterName", execInfo(v1, `{"cluster":{"server":"https://x","config":{"clusterName":""}}}`), "has no clusterName"},
		{"clusterName no Secret name", execInfo(v1, `{"cluster":{"server":"https://x","config":{"clusterName":"../spoke"}}}`), `clusterName "../spoke" cannot name a Secret`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequest([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// The response is decoded the way client-go's exec authenticator decodes
// it: a universal decoder for the configured version, which must match.
func TestResponseDecodesAsClientGoDoes(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	for _, v := range []string{"v1", "v1beta1"} {
		gv := schema.GroupVersion{Group: "client.authentication.k8s.io", Version: v}
		b, err := Response(gv.String(), "tok-123")
		require.NoError(t, err)
		assert.True(t, bytes.HasSuffix(b, []byte("}\n")), "one line of JSON")
		cred := &clientauthentication.ExecCredential{}
		_, gvk, err := codecs.UniversalDecoder(gv).Decode(b, nil, cred)
		require.NoError(t, err)
		assert.Equal(t, gv, gvk.GroupVersion(), "client-go refuses another version than the one it sent")
		require.NotNil(t, cred.Status)
		assert.Equal(t, "tok-123", cred.Status.Token)
		assert.Nil(t, cred.Status.ExpirationTimestamp)
	}
	b, err := Response("client.authentication.k8s.io/v1", "tok-123")
	require.NoError(t, err)
	assert.JSONEq(t, `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false},"status":{"token":"tok-123"}}`, string(b))

	_, err = Response("client.authentication.k8s.io/v1alpha1", "tok-123")
	assert.ErrorContains(t, err, "want client.authentication.k8s.io/v1 or")
	_, err = Response("client.authentication.k8s.io/v1", "")
	assert.Error(t, err)
}

func TestResolveNamespace(t *testing.T) {
	dir := t.TempDir()
	sa := filepath.Join(dir, "namespace")
	require.NoError(t, os.WriteFile(sa, []byte("from-file\n"), 0o600))
	missing := filepath.Join(dir, "missing")

	ns, err := ResolveNamespace("from-flag", "from-env", sa)
	require.NoError(t, err)
	assert.Equal(t, Namespace{"from-flag", "--namespace"}, ns)

	ns, err = ResolveNamespace("", "from-env", sa)
	require.NoError(t, err)
	assert.Equal(t, Namespace{"from-env", "POD_NAMESPACE"}, ns)

	ns, err = ResolveNamespace("", "", sa)
	require.NoError(t, err)
	assert.Equal(t, Namespace{"from-file", sa}, ns)

	_, err = ResolveNamespace("", "", missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no namespace to read the Secret from: pass --namespace, set POD_NAMESPACE")
	assert.Contains(t, err.Error(), missing)

	_, err = ResolveNamespace("", "", dir)
	assert.ErrorContains(t, err, "reading the service account's namespace", "a directory is not a missing file")

	_, err = ResolveNamespace("Not_A_Namespace", "", missing)
	assert.ErrorContains(t, err, `namespace "Not_A_Namespace" (from --namespace) is not a namespace name`)
}

// Everything wrong with the input is an InputError, found before any
// cluster is reached, and nothing is written.
func TestRunInputErrors(t *testing.T) {
	dir := t.TempDir()
	good := execInfo("client.authentication.k8s.io/v1", clusterSpec)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"request", Options{ExecInfo: execInfo("client.authentication.k8s.io/v1", `{}`), Namespace: "fleet"}, "provideClusterInfo"},
		{"namespace", Options{ExecInfo: good, ServiceAccountNamespaceFile: filepath.Join(dir, "none")}, "no namespace"},
		{"kubeconfig", Options{ExecInfo: good, Namespace: "fleet", Kubeconfig: filepath.Join(dir, "none.kubeconfig")}, "--kubeconfig " + filepath.Join(dir, "none.kubeconfig")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), tc.o, &out)
			require.Error(t, err)
			var ie *InputError
			assert.True(t, errors.As(err, &ie), "%v is an InputError", err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, out.String())
		})
	}
}
