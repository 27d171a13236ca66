// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// served is one group version and the resources mcs-gitops needs from it.
type served struct {
	groupVersion string
	resources    []string
	// optional ones are a warning when missing, not an error.
	optional bool
	why      string
}

// wantServed is what the member must serve: the MCS API at the versions
// the renderer writes and CoreDNS reads (v1alpha1), the policy CRD, and in
// gateway mode the Gateway API kinds it renders.
func wantServed(cfg *v1alpha1.ClusterSet, cm v1alpha1.Member) []served {
	out := []served{{groupVersion: "multicluster.x-k8s.io/v1alpha1", resources: []string{"serviceexports", "serviceimports"}, why: "the MCS API"}}
	if v := cfg.Spec.Render.ServiceImportAPIVersion; v != "" && v != "v1alpha1" {
		out = append(out, served{groupVersion: "multicluster.x-k8s.io/" + string(v), resources: []string{"serviceimports"}, why: "spec.render.serviceImportAPIVersion"})
	}
	out = append(out, served{groupVersion: "mcs-gitops.io/v1alpha1", resources: []string{"globaltrafficpolicies"}, optional: true,
		why: "without it the member's GlobalTrafficPolicies cannot exist"})
	if cm.Mode == v1alpha1.ModeGateway {
		res := []string{"gateways", "httproutes", "tcproutes"}
		if cm.Gateway == nil || cm.Gateway.TCPListeners != v1alpha1.TCPListenersGateway {
			res = append(res, "listenersets")
		}
		out = append(out, served{groupVersion: "gateway.networking.k8s.io/v1", resources: res, why: "gateway mode"})
	}
	return out
}

func (o *Options) crds(ctx context.Context, cs kubernetes.Interface, cm v1alpha1.Member) Check {
	c := Check{Name: CheckCRDs, Status: OK}
	var missing, deleting, optional, found []string
	for _, w := range wantServed(o.Config, cm) {
		verbs, err := clusters.ServedResources(ctx, cs, w.groupVersion)
		if err != nil {
			// Not knowing is not "missing": join would not fix it.
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return Check{Name: CheckCRDs, Status: Error, Message: fmt.Sprintf("cannot tell what it serves (%s): %v", w.groupVersion, err),
				Fix: "run doctor again; if it persists, the member's apiserver or its aggregated APIs are failing (kubectl get apiservices)"}
		}
		for _, r := range w.resources {
			name := fmt.Sprintf("%s (%s)", r, w.groupVersion)
			v, served := verbs[r]
			switch {
			case served && !slices.Contains(v, "create"):
				// A CRD being deleted is still listed, without the verbs
				// that write: its objects are going, and it may stay so
				// for as long as a finalizer on one of them holds it.
				deleting = append(deleting, name)
			case served:
				found = append(found, name)
			case w.optional:
				optional = append(optional, name+": "+w.why)
			default:
				missing = append(missing, name)
			}
		}
	}
	switch {
	case len(deleting) > 0:
		c.Status = Error
		c.Message = "being deleted (its CRD is Terminating): " + strings.Join(deleting, ", ")
		if len(missing) > 0 {
			c.Message += "; not served: " + strings.Join(missing, ", ")
		}
		c.Fix = "a CRD that stays Terminating is held by finalizers on its objects (kubectl get <resource> -A); once it is gone, " +
			joinFix(cm.Name, "") + " installs it again"
	case len(missing) > 0:
		c.Status = Error
		c.Message = "not served: " + strings.Join(missing, ", ")
		extra := ""
		if cm.Mode == v1alpha1.ModeGateway && slices.ContainsFunc(missing, func(s string) bool { return strings.Contains(s, "gateway.networking") }) {
			extra = " --gateway"
		}
		c.Fix = joinFix(cm.Name, extra) + " installs them"
	case len(optional) > 0:
		c.Status = Warning
		c.Message = "not served: " + strings.Join(optional, "; ")
		c.Fix = joinFix(cm.Name, "") + " installs it"
	default:
		c.Message = "served: " + strings.Join(found, ", ")
	}
	return c
}
