// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Reasons a member could not be read, in Result.Reason and Health.Reason.
const (
	// ReasonUnreachable: no answer from the apiserver (connection refused,
	// DNS, TLS, 5xx).
	ReasonUnreachable = "Unreachable"
	// ReasonTimeout: the member did not answer within the per-member timeout.
	ReasonTimeout = "Timeout"
	// ReasonUnauthorized: the apiserver rejected the credentials (401).
	ReasonUnauthorized = "Unauthorized"
	// ReasonForbidden: the credentials lack a permission (403).
	ReasonForbidden = "Forbidden"
	// ReasonCRDMissing: the member does not serve ServiceExports.
	ReasonCRDMissing = "CRDMissing"
	// ReasonConfig: no client could be built (kubeconfig or Secret problem).
	ReasonConfig = "Config"
	// ReasonNotHealthy: the member's ClusterProfile says its control
	// plane is not healthy (ControlPlaneHealthy False); it is not read.
	ReasonNotHealthy = "NotHealthy"
)

// Reasons lists every reason class, for metrics that export one series
// per class.
var Reasons = []string{ReasonUnreachable, ReasonTimeout, ReasonUnauthorized, ReasonForbidden, ReasonCRDMissing, ReasonConfig, ReasonNotHealthy}

// NotHealthyError is a member whose cluster manager reports its control
// plane unhealthy: it is reported like an unreachable member, without
// being contacted.
type NotHealthyError struct {
	// Profile is the ClusterProfile, namespace/name; Message what its
	// ControlPlaneHealthy condition says.
	Profile, Message string
}

func (e *NotHealthyError) Error() string {
	return fmt.Sprintf("ClusterProfile %s says the control plane is not healthy (ControlPlaneHealthy=False): %s", e.Profile, e.Message)
}

// errReason is the reason class of a member without a client.
func errReason(err error) string {
	var nh *NotHealthyError
	if errors.As(err, &nh) {
		return ReasonNotHealthy
	}
	return ReasonConfig
}

// errCRDMissing marks a list that failed because the resource is not served.
var errCRDMissing = errors.New("resource not served (CRD not installed)")

// classify names why reading a member failed. ctx is the per-member context:
// once its deadline has passed, any failure counts as a timeout.
func classify(ctx context.Context, err error) string {
	var netErr net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errCRDMissing), meta.IsNoMatchError(err):
		return ReasonCRDMissing
	case apierrors.IsUnauthorized(err):
		return ReasonUnauthorized
	case apierrors.IsForbidden(err):
		return ReasonForbidden
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded),
		errors.Is(err, os.ErrDeadlineExceeded), apierrors.IsTimeout(err), apierrors.IsServerTimeout(err),
		errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	}
	return ReasonUnreachable
}
