// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/internal/member/corefile"
	"github.com/mcs-gitops/mcs-gitops/internal/member/join"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// coreDNS reads the member's Corefile (the Role mcs-gitops-corefile-reader
// allows exactly that) and says whether it serves the ClusterSet zone.
func (o *Options) coreDNS(ctx context.Context, cs kubernetes.Interface, cm v1alpha1.Member) Check {
	c := Check{Name: CheckCoreDNS}
	where := join.DefaultCoreDNS
	cmap, err := cs.CoreV1().ConfigMaps(where.Namespace).Get(ctx, where.ConfigMap, metav1.GetOptions{})
	what := fmt.Sprintf("ConfigMap %s/%s", where.Namespace, where.ConfigMap)
	switch {
	case apierrors.IsForbidden(err):
		c.Status, c.Message = Warning, "may not read "+what+", so cannot tell whether CoreDNS serves "+o.Zone
		c.Fix = joinFix(cm.Name, "") + " grants reading it (Role kube-system/mcs-gitops-corefile-reader)"
		return c
	case apierrors.IsNotFound(err):
		c.Status, c.Message = Warning, "no "+what+": CoreDNS is configured some other way here, so doctor cannot tell whether it serves "+o.Zone
		c.Fix = "check the member's DNS by hand (docs/dns.md), then --skip coredns; --dns-probe tests resolution itself"
		return c
	case err != nil:
		c.Status, c.Message = Warning, fmt.Sprintf("read %s: %v", what, err)
		return c
	}
	text, ok := cmap.Data[join.CorefileKey]
	if !ok {
		c.Status, c.Message = Warning, what+" has no key "+join.CorefileKey
		c.Fix = "check the member's DNS by hand (docs/dns.md)"
		return c
	}
	if !corefile.Serves(text, o.Zone) {
		c.Status = Error
		c.Message = fmt.Sprintf("CoreDNS does not serve %s (no kubernetes plugin with the zone and `multicluster %s`): <svc>.<ns>.svc.%s names do not resolve", o.Zone, o.Zone, o.Zone)
		c.Fix = joinFix(cm.Name, " --dns") + " (shows the Corefile diff; docs/dns.md)"
		return c
	}
	c.Status, c.Message = OK, fmt.Sprintf("the Corefile in %s serves %s from ServiceImports", what, o.Zone)
	return c
}

// probe resolves the first imported name (in namespace/name order)
// through the member's DNS and compares the answer with the import's IPs.
func (o *Options) probe(ctx context.Context, cs kubernetes.Interface, m *clusters.Member, cm v1alpha1.Member) Check {
	c := Check{Name: CheckDNSProbe}
	var list mcsv1alpha1.ServiceImportList
	if err := m.Client.List(ctx, &list); err != nil {
		c.Status, c.Message = Warning, fmt.Sprintf("list ServiceImports: %v", err)
		return c
	}
	imports := list.Items
	slices.SortFunc(imports, func(a, b mcsv1alpha1.ServiceImport) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	idx := slices.IndexFunc(imports, func(si mcsv1alpha1.ServiceImport) bool {
		return si.Spec.Type == mcsv1alpha1.Headless || len(si.Spec.IPs) > 0
	})
	if idx < 0 {
		c.Status, c.Message = Skipped, "no ServiceImport with an address to resolve yet"
		return c
	}
	si := imports[idx]
	server := o.DNSServers[cm.Name]
	if server == "" {
		svc, err := cs.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			c.Status, c.Message = Warning, fmt.Sprintf("find the member's DNS: Service kube-system/kube-dns: %v", err)
			c.Fix = "pass --dns-server " + cm.Name + "=<host:port>"
			return c
		}
		server = net.JoinHostPort(svc.Spec.ClusterIP, "53")
	}
	name := fmt.Sprintf("%s.%s.svc.%s", si.Name, si.Namespace, o.Zone)
	addrs, err := LookupVia(ctx, server, name)
	if err != nil {
		c.Status, c.Message = Error, fmt.Sprintf("%s via %s: %v", name, server, err)
		c.Fix = "see the coredns check; a ServiceIP only answers from inside the member's network (--dns-server " + cm.Name + "=<host:port> to query elsewhere)"
		return c
	}
	want := slices.Sorted(slices.Values(si.Spec.IPs))
	if si.Spec.Type != mcsv1alpha1.Headless && !slices.Equal(addrs, want) {
		c.Status = Error
		c.Message = fmt.Sprintf("%s via %s answered %s, the ServiceImport says %s", name, server, strings.Join(addrs, ", "), strings.Join(want, ", "))
		c.Fix = "the member's DNS answers from something else than its ServiceImports: see docs/dns.md (NodeLocal DNSCache, stub domains)"
		return c
	}
	c.Status, c.Message = OK, fmt.Sprintf("%s via %s: %s", name, server, strings.Join(addrs, ", "))
	return c
}

// LookupVia resolves name (without the trailing dot) through the DNS
// server at host:port only, within 5 s, and returns the addresses sorted.
func LookupVia(ctx context.Context, server, name string) ([]string, error) {
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server)
	}}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := res.LookupHost(qctx, name+".")
	slices.Sort(addrs)
	return addrs, err
}
