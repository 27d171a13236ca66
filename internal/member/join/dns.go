// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/deploy"
	"github.com/mcs-gitops/mcs-gitops/internal/member/corefile"
)

// CoreDNS names the ConfigMap holding a member's Corefile (key Corefile),
// as kubeadm and most distributions install it.
type CoreDNS struct {
	Namespace, ConfigMap string
}

// DefaultCoreDNS is kubeadm's.
var DefaultCoreDNS = CoreDNS{Namespace: "kube-system", ConfigMap: "coredns"}

// CorefileKey is the ConfigMap key CoreDNS reads.
const CorefileKey = "Corefile"

// configureDNS makes the member's CoreDNS answer zone from ServiceImports:
// it lets CoreDNS read them and adds the zone to the kubernetes plugin of
// the Corefile, printing the diff first. A CoreDNS not configured through
// that ConfigMap (a managed DNS, NodeLocal DNSCache only) is an error that
// points to docs/dns.md.
func (r *reporter) configureDNS(ctx context.Context, c client.Client, dns CoreDNS, zone string) error {
	objs, err := deploy.Objects(deploy.CoreDNS...)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := r.apply(ctx, c, o); err != nil {
			return err
		}
	}
	what := fmt.Sprintf("ConfigMap %s/%s", dns.Namespace, dns.ConfigMap)
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: dns.Namespace, Name: dns.ConfigMap}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %s not found: CoreDNS is not configured by a ConfigMap there; configure it by hand (docs/dns.md)", r.where, what)
		}
		return fmt.Errorf("%s: read %s: %w", r.where, what, err)
	}
	old, ok := cm.Data[CorefileKey]
	if !ok {
		return fmt.Errorf("%s: %s has no key %s; configure CoreDNS by hand (docs/dns.md)", r.where, what, CorefileKey)
	}
	updated, err := corefile.AddMulticluster(old, zone)
	if err != nil {
		return fmt.Errorf("%s: %s: %w; configure CoreDNS by hand (docs/dns.md)", r.where, what, err)
	}
	if updated == old {
		r.say(what+" (Corefile serves "+zone+")", "unchanged")
		return nil
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(old), B: difflib.SplitLines(updated),
		FromFile: what + " (now)", ToFile: what + " (serving " + zone + ")", Context: 3,
	})
	if err != nil {
		return err
	}
	fmt.Fprint(r.out, diff)
	cm.Data[CorefileKey] = updated
	var opts []client.UpdateOption
	if r.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Update(ctx, &cm, opts...); err != nil {
		return fmt.Errorf("%s: update %s: %w", r.where, what, err)
	}
	r.say(what, "configured")
	if !strings.Contains(updated, "reload") {
		fmt.Fprintf(r.out, "%s: the Corefile has no reload plugin: restart CoreDNS to load it (kubectl -n %s rollout restart deployment coredns)\n", r.where, dns.Namespace)
	}
	return nil
}
