// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// A rotated forge token or App key must restart run like a Git token does.
func TestSecretRefsIncludeReviewCredentials(t *testing.T) {
	ref := func(name string) *v1alpha1.CredentialSource {
		return &v1alpha1.CredentialSource{SecretRef: &v1alpha1.SecretKeyRef{Namespace: "mcs-gitops", Name: name, Key: "value"}}
	}
	cfg := &v1alpha1.ClusterSet{}
	cfg.Spec.Git.Auth.Token = ref("git-token")
	cfg.Spec.Review.Forge.Token = ref("forge-token")
	assert.Equal(t, []v1alpha1.SecretKeyRef{{Namespace: "mcs-gitops", Name: "forge-token"}, {Namespace: "mcs-gitops", Name: "git-token"}}, SecretRefs(cfg))

	cfg.Spec.Review.Forge.Token = nil
	cfg.Spec.Review.Forge.GitHubApp = &v1alpha1.GitHubAppAuth{AppID: 1, InstallationID: 2, PrivateKey: ref("app-key")}
	assert.Equal(t, []v1alpha1.SecretKeyRef{{Namespace: "mcs-gitops", Name: "app-key"}, {Namespace: "mcs-gitops", Name: "git-token"}}, SecretRefs(cfg))
}

// The signing key, its passphrase and a verify key kept in a Secret are
// followed like the other credentials, each Secret once.
func TestSecretRefsIncludeSigningAndVerifyKeys(t *testing.T) {
	ref := func(name string) *v1alpha1.CredentialSource {
		return &v1alpha1.CredentialSource{SecretRef: &v1alpha1.SecretKeyRef{Namespace: "mcs", Name: name, Key: "k"}}
	}
	cfg := &v1alpha1.ClusterSet{}
	cfg.Spec.Git.Auth.Token = ref("git")
	cfg.Spec.Git.Signing = &v1alpha1.GitSigning{Format: v1alpha1.SigningSSH, Key: ref("signing"), Passphrase: ref("signing")}
	cfg.Spec.Git.Verify = &v1alpha1.GitVerify{Keys: []v1alpha1.VerifyKey{{Name: "a", SSH: "ssh-ed25519 AAAA a"}, {Name: "forge", Source: ref("forge-key")}}}
	assert.Equal(t, []v1alpha1.SecretKeyRef{{Namespace: "mcs", Name: "forge-key"}, {Namespace: "mcs", Name: "git"}, {Namespace: "mcs", Name: "signing"}},
		SecretRefs(cfg))
}
