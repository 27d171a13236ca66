// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/credential"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// TestCredentialSecretToken runs `credential secret-token` against a real
// apiserver as a consumer's ServiceAccount that may get only the named
// Secrets, as upstream's secretreader README grants: the token comes back
// in an ExecCredential, and no failure's message holds a token.
func TestCredentialSecretToken(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := context.Background()
	const ns = "fleet-system"
	tokens := map[string]string{"spoke-1": "tok-spoke-1-secret", "spoke-3": "tok-spoke-3-secret", "git": "tok-git-secret"}
	labelled := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{credential.MemberLabel: name}}
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		// Made from a file: the trailing newline is not part of the token.
		&corev1.Secret{ObjectMeta: labelled("spoke-1"), Data: map[string][]byte{"token": []byte(tokens["spoke-1"] + "\n")}},
		&corev1.Secret{ObjectMeta: labelled("spoke-2"), Data: map[string][]byte{"kubeconfig": []byte("apiVersion: v1")}},
		// Not granted to the consumer.
		&corev1.Secret{ObjectMeta: labelled("spoke-3"), Data: map[string][]byte{"token": []byte(tokens["spoke-3"])}},
		// Granted, with a token key, but made for something else: a
		// profile naming it must not get it sent to its server.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "git"}, Data: map[string][]byte{"token": []byte(tokens["git"])}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secretreader"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"},
			ResourceNames: []string{"spoke-1", "spoke-2", "spoke-4", "git"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secretreader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "consumer", Namespace: ns}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "secretreader"}},
	}
	for _, o := range objs {
		require.NoError(t, c.Client.Create(ctx, o))
	}

	kc := filepath.Join(t.TempDir(), "consumer.kubeconfig")
	require.NoError(t, c.WriteKubeconfigAs(kc, "system:serviceaccount:"+ns+":consumer",
		"system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated"))
	request := func(cluster string) string {
		return `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"https://` + cluster +
			`.example:6443","config":{"clusterName":"` + cluster + `"}},"interactive":false}}`
	}

	// The namespace from POD_NAMESPACE, the kubeconfig from KUBECONFIG. The
	// apiserver's RBAC cache may take a moment to see the new binding.
	var (
		out bytes.Buffer
		err error
	)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out.Reset()
		err = credential.Run(ctx, credential.Options{ExecInfo: request("spoke-1"), PodNamespace: ns, KubeconfigEnv: kc}, &out)
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, err)
	var got clientauthv1.ExecCredential
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, "client.authentication.k8s.io/v1", got.APIVersion)
	assert.Equal(t, "ExecCredential", got.Kind)
	require.NotNil(t, got.Status)
	assert.Equal(t, tokens["spoke-1"], got.Status.Token)
	assert.Nil(t, got.Status.ExpirationTimestamp)

	for _, tc := range []struct{ cluster, want string }{
		{"spoke-2", `Secret fleet-system/spoke-2 has no key "token" (keys: kubeconfig)`},
		{"spoke-3", "Secret fleet-system/spoke-3 (namespace from --namespace): reading it is forbidden: the identity needs get on secrets in namespace fleet-system"},
		{"spoke-4", `Secret fleet-system/spoke-4 does not exist (namespace from --namespace): it must hold the cluster's token in key "token"`},
		{"git", `Secret fleet-system/git is not labelled mcs-gitops.io/member=git, so it is not read`},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			var out bytes.Buffer
			err := credential.Run(ctx, credential.Options{ExecInfo: request(tc.cluster), Namespace: ns, Kubeconfig: kc}, &out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var ie *credential.InputError
			assert.False(t, errors.As(err, &ie), "reading the Secret failed, not the input")
			for _, tok := range tokens {
				assert.NotContains(t, err.Error(), tok)
			}
			assert.Empty(t, out.String(), "nothing on stdout when it fails")
		})
	}

	// --any-secret reads a Secret another tool wrote for the protocol.
	out.Reset()
	require.NoError(t, credential.Run(ctx, credential.Options{ExecInfo: request("git"), Namespace: ns, Kubeconfig: kc, AnySecret: true}, &out))
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, tokens["git"], got.Status.Token)
}
