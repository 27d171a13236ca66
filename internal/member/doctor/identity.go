// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/internal/member/join"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// ExpiryWarning is how long before its token expires doctor warns.
const ExpiryWarning = 30 * 24 * time.Hour

func reachable(ctx context.Context, cs kubernetes.Interface, host string) Check {
	// The discovery calls without a context would wait for ever on a
	// member that takes connections and never answers.
	v, err := discovery.ToDiscoveryInterfaceWithContext(cs.Discovery()).ServerVersionWithContext(ctx)
	if apierrors.IsUnauthorized(err) {
		// It answered; the identity check says what is wrong with the
		// credential.
		return Check{Name: CheckReachable, Status: OK, Message: "answers at " + host}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return Check{Name: CheckReachable, Status: Error, Message: fmt.Sprintf("%s: %v", host, err),
			Fix: "check the server URL in the member's kubeconfig and that mcs-gitops can reach it (network, the NetworkPolicy's egress)"}
	}
	return Check{Name: CheckReachable, Status: OK, Message: fmt.Sprintf("Kubernetes %s at %s", v.GitVersion, host)}
}

// identity says who the member takes the credential for, and when a
// bearer token expires.
func (o *Options) identity(ctx context.Context, cs kubernetes.Interface, token string, cm v1alpha1.Member) Check {
	c := Check{Name: CheckIdentity}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsUnauthorized(err):
		c.Status, c.Message = Error, "the member rejects the credential (expired or revoked token, or another cluster's)"
		c.Fix = joinFix(cm.Name, " --rotate")
		return c
	case err != nil:
		c.Status, c.Message = Warning, fmt.Sprintf("cannot tell who the credential is (SelfSubjectReview: %v)", err)
		return c
	}
	user := r.Status.UserInfo.Username
	c.Status, c.Message = OK, user
	if exp, ok := join.TokenExpiry(token); ok {
		left := exp.Sub(o.Now())
		c.Message += fmt.Sprintf(", token expires %s (in %s)", exp.UTC().Format(time.RFC3339), days(left))
		if left < ExpiryWarning {
			c.Status, c.Fix = Warning, joinFix(cm.Name, " --rotate")
		}
	}
	return c
}

func days(d time.Duration) string {
	if d < 48*time.Hour {
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}
