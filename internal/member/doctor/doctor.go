// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Check names, which --skip takes.
const (
	CheckConnect     = "connect"
	CheckReachable   = "reachable"
	CheckIdentity    = "identity"
	CheckCRDs        = "crds"
	CheckPermissions = "permissions"
	CheckCoreDNS     = "coredns"
	CheckDNSProbe    = "dns-probe"
)

// Names lists every check, in the order they run.
var Names = []string{CheckConnect, CheckReachable, CheckIdentity, CheckCRDs, CheckPermissions, CheckCoreDNS, CheckDNSProbe}

// Skippable are the checks --skip may leave out: the first three decide
// whether anything else can be checked, so skipping one would hide a
// member nothing was checked on.
var Skippable = Names[3:]

// Options say what to check.
type Options struct {
	Config  *v1alpha1.ClusterSet
	Members *clusters.Set
	// Only limits the report to these members; empty means all.
	Only []string
	// Skip names checks not to run, from Skippable.
	Skip []string
	// DNSProbe resolves one imported name per member through its DNS.
	DNSProbe bool
	// DNSServers overrides, per member, where the probe sends its query
	// (host:port); the default is the member's kube-system/kube-dns
	// Service, which only answers from inside the member's network.
	DNSServers map[string]string
	// Zone is the ClusterSet DNS zone; empty means clusterset.local.
	Zone string
	// Timeout bounds each member's checks; zero means 30 s.
	Timeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Run checks every member, concurrently, and returns the report in config
// order.
func Run(ctx context.Context, o Options) *Report {
	if o.Zone == "" {
		o.Zone = "clusterset.local"
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Report{}
	var wg sync.WaitGroup
	for _, cm := range o.Config.Spec.Members {
		if len(o.Only) > 0 && !slices.Contains(o.Only, cm.Name) {
			continue
		}
		r.Members = append(r.Members, Member{Name: cm.Name})
		i := len(r.Members) - 1
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, o.Timeout)
			defer cancel()
			r.Members[i].Checks = o.member(ctx, cm, o.Members.Member(cm.Name))
		})
	}
	wg.Wait()
	r.count()
	return r
}

// member runs one member's checks in order; a member that cannot be
// reached gets the rest as skipped, so the report shows what was not
// checked.
func (o *Options) member(ctx context.Context, cm v1alpha1.Member, m *clusters.Member) []Check {
	var out []Check
	add := func(c Check) {
		if !slices.Contains(o.Skip, c.Name) {
			out = append(out, c)
		}
	}
	skipRest := func(from int, why string) []Check {
		for _, n := range Names[from:] {
			add(Check{Name: n, Status: Skipped, Message: why})
		}
		return out
	}
	if m == nil || m.Err != nil {
		err := fmt.Errorf("not in the connected set")
		if m != nil {
			err = m.Err
		}
		add(Check{Name: CheckConnect, Status: Error, Message: err.Error(), Fix: connectFix(cm)})
		return skipRest(1, "no client")
	}
	add(Check{Name: CheckConnect, Status: OK, Message: "kubeconfig " + source(cm)})
	cs, err := kubernetes.NewForConfig(m.Config)
	if err != nil {
		add(Check{Name: CheckReachable, Status: Error, Message: err.Error(), Fix: connectFix(cm)})
		return skipRest(2, "no client")
	}
	reach := reachable(ctx, cs, m.Config.Host)
	add(reach)
	if reach.Status == Error {
		return skipRest(2, "not reachable")
	}
	id := o.identity(ctx, cs, m.Config.BearerToken, cm)
	add(id)
	if id.Status == Error {
		return skipRest(3, "credential rejected")
	}
	if !slices.Contains(o.Skip, CheckCRDs) {
		add(o.crds(ctx, cs, cm))
	}
	if !slices.Contains(o.Skip, CheckPermissions) {
		add(o.permissions(ctx, cs, cm))
	}
	if !slices.Contains(o.Skip, CheckCoreDNS) {
		add(o.coreDNS(ctx, cs, cm))
	}
	if !o.DNSProbe {
		add(Check{Name: CheckDNSProbe, Status: Skipped, Message: "not asked for (--dns-probe)"})
	} else if !slices.Contains(o.Skip, CheckDNSProbe) {
		add(o.probe(ctx, cs, m, cm))
	}
	return out
}

func source(cm v1alpha1.Member) string {
	k := cm.Kubeconfig
	switch {
	case k.SecretRef != nil:
		return fmt.Sprintf("from Secret %s/%s", k.SecretRef.Namespace, k.SecretRef.Name)
	case k.InCluster:
		return "in-cluster"
	case k.Context != "":
		return fmt.Sprintf("%s, context %s", k.Path, k.Context)
	}
	return k.Path
}

func connectFix(cm v1alpha1.Member) string {
	if cm.Kubeconfig.SecretRef != nil {
		return fmt.Sprintf("mcs-gitops member join %s --management-kubeconfig <management kubeconfig> writes that Secret (or fix its kubeconfig)", cm.Name)
	}
	return "fix the member's kubeconfig in clusterset.yaml"
}

// joinFix is the usual repair: join again with the member's administrator
// credentials, which is idempotent.
func joinFix(name, extra string) string {
	return fmt.Sprintf("mcs-gitops member join %s --context <%s admin> --management-kubeconfig <management kubeconfig>%s", name, name, extra)
}
