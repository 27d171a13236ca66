// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/mcs-gitops/mcs-gitops/deploy"
)

// MemberUser is the user name the member's apiserver gives the joined
// identity, the one deploy/member-rbac binds and the admission policy
// names.
var MemberUser = "system:serviceaccount:" + deploy.MemberServiceAccountNamespace + ":" + deploy.MemberServiceAccountName

// issueToken asks the member for a token of the member ServiceAccount that
// expires after ttl (the apiserver may shorten it: its
// --service-account-max-token-expiration wins) and returns it with the
// expiry the apiserver granted.
func issueToken(ctx context.Context, cs kubernetes.Interface, ttl time.Duration) (string, time.Time, error) {
	secs := int64(ttl / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(deploy.MemberServiceAccountNamespace).CreateToken(ctx, deploy.MemberServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("request a token for ServiceAccount %s/%s: %w",
			deploy.MemberServiceAccountNamespace, deploy.MemberServiceAccountName, err)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}

// TokenExpiry reads the expiry of a JWT bearer token without verifying it
// (the apiserver does that); ok is false for a token that is not a JWT or
// has no expiry.
func TokenExpiry(token string) (exp time.Time, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	return time.Unix(*claims.Exp, 0), true
}

// authenticatesAs reports whether cfg authenticates to its apiserver as
// user: a token that was revoked (its ServiceAccount deleted) or expired
// does not.
func authenticatesAs(ctx context.Context, cfg *rest.Config, user string) bool {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	return err == nil && r.Status.UserInfo.Username == user
}
