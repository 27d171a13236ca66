// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/deploy"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// access is one verb on one resource, cluster-wide.
type access struct {
	group, resource, subresource, verb string
}

func (a access) String() string {
	r := a.resource
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.group != "" {
		r += "." + a.group
	}
	return a.verb + " " + r
}

// beyondNeed is what the loop never does; an identity allowed any of it
// has more than it needs, typically an administrator kubeconfig.
var beyondNeed = []access{
	{verb: "*", group: "*", resource: "*"},
	{verb: "get", resource: "secrets"},
	{verb: "create", resource: "pods"},
	{verb: "delete", resource: "namespaces"},
	{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings"},
}

// needed is every verb a cycle uses against this member, read from the
// ClusterRoles of deploy/member-rbac (the same files join installs), less
// the Gateway API rights of a mode the member is not in.
func needed(cfg *v1alpha1.ClusterSet, cm v1alpha1.Member) ([]access, error) {
	files := deploy.MemberRole
	if cfg.Spec.Render.CreateMissingNamespaces {
		files = slices.Concat(files, deploy.CreateNamespaces)
	}
	objs, err := deploy.Objects(files...)
	if err != nil {
		return nil, err
	}
	tcpInGateway := cm.Gateway != nil && cm.Gateway.TCPListeners == v1alpha1.TCPListenersGateway
	var out []access
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			return nil, fmt.Errorf("deploy: ClusterRole %s: %w", o.GetName(), err)
		}
		for _, rule := range role.Rules {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					if g == "gateway.networking.k8s.io" && (cm.Mode != v1alpha1.ModeGateway ||
						res == "gateways" && !tcpInGateway || res == "listenersets" && tcpInGateway) {
						continue
					}
					r, sub, _ := strings.Cut(res, "/")
					for _, v := range rule.Verbs {
						out = append(out, access{group: g, resource: r, subresource: sub, verb: v})
					}
				}
			}
		}
	}
	return out, nil
}

func (o *Options) permissions(ctx context.Context, cs kubernetes.Interface, cm v1alpha1.Member) Check {
	c := Check{Name: CheckPermissions}
	want, err := needed(o.Config, cm)
	if err != nil {
		c.Status, c.Message = Error, err.Error()
		return c
	}
	var missing, extra []string
	for _, a := range want {
		ok, err := allowed(ctx, cs, a)
		if err != nil {
			c.Status, c.Message = Warning, fmt.Sprintf("cannot review access (%v)", err)
			return c
		}
		if !ok {
			missing = append(missing, a.String())
		}
	}
	for _, a := range beyondNeed {
		if ok, err := allowed(ctx, cs, a); err == nil && ok {
			extra = append(extra, a.String())
		}
	}
	switch {
	case len(missing) > 0:
		c.Status = Error
		c.Message = fmt.Sprintf("may not %s", strings.Join(missing, ", "))
		extraFlag := ""
		if o.Config.Spec.Render.CreateMissingNamespaces {
			extraFlag = " --create-namespaces"
		}
		c.Fix = "update the member role: " + joinFix(cm.Name, extraFlag) + " (or kubectl apply -k deploy/member-rbac)"
	case len(extra) > 0:
		c.Status = Warning
		c.Message = fmt.Sprintf("all %d verbs a cycle uses are allowed, and more than it needs: %s", len(want), strings.Join(extra, ", "))
		c.Fix = "use the least-privilege identity " + joinFix(cm.Name, "") + " writes, not an administrator kubeconfig"
	default:
		c.Status = OK
		c.Message = fmt.Sprintf("all %d verbs a cycle uses are allowed, and nothing beyond them that doctor probes", len(want))
	}
	if c.Status == Error && len(extra) > 0 {
		c.Message += "; and more than it needs: " + strings.Join(extra, ", ")
	}
	return c
}

func allowed(ctx context.Context, cs kubernetes.Interface, a access) (bool, error) {
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: a.group, Resource: a.resource, Subresource: a.subresource, Verb: a.verb,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("%s: %w", a, err)
	}
	return r.Status.Allowed, nil
}
