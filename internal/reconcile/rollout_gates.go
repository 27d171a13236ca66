// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/internal/member/doctor"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// GateChecker checks a rollout's gates for service namespace/name in a
// member of the wave in progress, after the loop applied it: what the
// member imports must work there before the next wave gets it.
type GateChecker interface {
	Gate(ctx context.Context, member, namespace, name string) rollout.Check
}

// The gates, in the order they are checked; a Check names the first that
// does not hold.
const (
	gateApplied = "applied"       // the member took every object of the service
	gateImport  = "ServiceImport" // it holds the ServiceImport, with its IPs when it has a cluster IP
	gateDerived = "derived Service"
	gateDNS     = "DNS"
)

// observeRollouts checks the gates of every rollout's wave in progress
// once its commit is applied, and keeps what it saw (Progress) for the
// next render. It returns whether that render must come soon (a gate
// failed, or a soak is over) and when, otherwise, the next look is due.
func (l *Loop) observeRollouts(ctx context.Context, pub *published, applied []*apply.Result) (again bool, due time.Time) {
	if pub.tree == nil || pub.tree.rollouts == nil || len(pub.tree.rollouts.state.Rollouts) == 0 {
		l.cacheMu.Lock()
		l.progress, l.rolloutWake = nil, time.Time{}
		l.cacheMu.Unlock()
		if pub.tree != nil {
			// The last rollout ended: the gauge says none is left.
			l.observeRolloutMetrics(&rollout.State{})
		}
		return false, time.Time{}
	}
	st := pub.tree.rollouts.state
	results := map[string]*apply.Result{}
	for _, r := range applied {
		results[r.Member] = r
	}
	readable := readable(pub.collected)
	unreachable := l.Config.Spec.Rollout.Unreachable
	now := l.now()
	next := map[string]*rollout.Progress{}
	for _, r := range st.Rollouts {
		p := &rollout.Progress{}
		if old := l.progressOf(r.Service); old != nil {
			*p = *old
		}
		next[r.Service] = p
		if r.Paused != nil {
			l.announcePause(ctx, r, pub.report)
		}
		if r.Aborted || r.Paused != nil {
			continue
		}
		ns, name, _ := strings.Cut(r.Service, "/")
		var checks []rollout.Check
		for _, m := range r.Current().Members {
			checks = append(checks, l.gate(ctx, m, ns, name, readable[m], results[m]))
		}
		failedBefore, waitingBefore := p.Failed != nil, p.WaitingOn
		r.Observe(p, checks, unreachable, now)
		if p.Waiting != "" && p.WaitingOn != waitingBefore {
			l.log().Info("rollout wave waiting", "service", r.Service, "wave", r.Reached, "for", p.Waiting)
		}
		if p.Failed != nil && !failedBefore {
			again = true
		}
		if d := r.Due(p); !d.IsZero() {
			if !d.After(now) {
				again = true
			} else if due.IsZero() || d.Before(due) {
				due = d
			}
		}
	}
	l.cacheMu.Lock()
	l.progress, l.rolloutWake = next, due
	if again {
		l.rolloutGen++
	}
	l.cacheMu.Unlock()
	l.observeRolloutMetrics(st)
	return again, due
}

// gate checks one member: unreachable when it was not read or its apply
// failed as a whole; failed when it refused an object of the service;
// otherwise what the GateChecker says.
func (l *Loop) gate(ctx context.Context, member, ns, name string, read bool, res *apply.Result) rollout.Check {
	c := rollout.Check{Member: member}
	if !read || res != nil && res.Err != nil {
		c.Unreachable = true
		return c
	}
	if res != nil {
		if i := slices.IndexFunc(res.Refused, func(f apply.Refusal) bool { return f.Service == ns+"/"+name }); i >= 0 {
			c.Gate, c.Message, c.Failed = gateApplied, "the member refused "+res.Refused[i].String(), true
			return c
		}
	}
	checker := l.Gates
	if checker == nil {
		checker = memberGates{l}
	}
	return checker.Gate(ctx, member, ns, name)
}

// memberGates reads a member's ServiceImport and derived Service.
type memberGates struct{ l *Loop }

func (g memberGates) Gate(ctx context.Context, member, ns, name string) rollout.Check {
	c := rollout.Check{Member: member}
	var cl client.Client
	if g.l.Members != nil {
		if m := g.l.Members.Member(member); m != nil && m.Err == nil {
			cl = m.Client
		}
	}
	if cl == nil {
		c.Unreachable = true
		return c
	}
	version := string(g.l.Config.Spec.Render.ServiceImportAPIVersion)
	if version == "" {
		version = string(v1alpha1.ServiceImportV1Alpha1)
	}
	si := &unstructured.Unstructured{}
	si.SetGroupVersionKind(schema.GroupVersionKind{Group: mcsv1alpha1.GroupName, Version: version, Kind: "ServiceImport"})
	switch err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, si); {
	case apierrors.IsNotFound(err):
		c.Gate, c.Message = gateImport, "not there yet"
		return c
	case err != nil:
		c.Unreachable = true
		return c
	}
	typ, _, _ := unstructured.NestedString(si.Object, "spec", "type")
	ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
	if typ != string(mcsv1alpha1.Headless) && len(ips) == 0 {
		c.Gate, c.Message = gateImport, "has no IPs yet"
		return c
	}
	derived := si.GetAnnotations()[render.DerivedServiceAnnotation]
	if derived == "" {
		return c // a member that cannot serve the import's families gets no derived Service
	}
	svc := &corev1.Service{}
	switch err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: derived}, svc); {
	case apierrors.IsNotFound(err):
		c.Gate, c.Message = gateDerived, fmt.Sprintf("%s/%s is not there yet", ns, derived)
		return c
	case err != nil:
		c.Unreachable = true
		return c
	}
	if gate := g.l.Config.Spec.Rollout.DNS; gate != nil {
		c.Gate, c.Message = g.dns(ctx, cl, gate, member, ns, name, typ, ips)
	}
	return c
}

// dns resolves the service's ClusterSet name through the member's DNS
// and compares the answer with the import's IPs: the gate, and why it
// does not hold ("" when it does).
func (g memberGates) dns(ctx context.Context, cl client.Client, gate *v1alpha1.RolloutDNSGate, member, ns, name, typ string, ips []string) (string, string) {
	server := gate.Servers[member]
	if server == "" {
		dns := &corev1.Service{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kube-dns"}, dns); err != nil {
			return gateDNS, fmt.Sprintf("find the member's DNS (Service kube-system/kube-dns): %v; set spec.rollout.dns.servers.%s", err, member)
		}
		server = net.JoinHostPort(dns.Spec.ClusterIP, "53")
	}
	zone := cmp.Or(gate.Zone, "clusterset.local")
	fqdn := fmt.Sprintf("%s.%s.svc.%s", name, ns, zone)
	got, err := doctor.LookupVia(ctx, server, fqdn)
	switch {
	case err != nil:
		return gateDNS, fmt.Sprintf("%s via %s: %v", fqdn, server, err)
	case typ != string(mcsv1alpha1.Headless) && !slices.Equal(got, slices.Sorted(slices.Values(ips))):
		return gateDNS, fmt.Sprintf("%s via %s answers %s, the ServiceImport says %s", fqdn, server, strings.Join(got, ", "), strings.Join(ips, ", "))
	}
	return "", ""
}

// rolloutGeneration is the rollouts' generation for a render made now:
// it moves on once a soaking wave is due, so that render is made anew.
func (l *Loop) rolloutGeneration() int {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	if !l.rolloutWake.IsZero() && !l.now().Before(l.rolloutWake) {
		l.rolloutGen++
		l.rolloutWake = time.Time{}
	}
	return l.rolloutGen
}

// observeRolloutMetrics sets the rollouts gauge by state.
func (l *Loop) observeRolloutMetrics(st *rollout.State) {
	if l.Metrics == nil {
		return
	}
	n := map[string]int{}
	for _, r := range st.Rollouts {
		n[r.StateName()]++
	}
	for _, s := range rollout.States {
		l.Metrics.Rollouts.WithLabelValues(s).Set(float64(n[s]))
	}
}

// announcePause writes a Warning Event on each export of r's service,
// once per pause: the export's owners see which gate in which member.
func (l *Loop) announcePause(ctx context.Context, r *rollout.Rollout, report *render.Report) {
	key := r.Service + "@" + r.Paused.Since.String()
	l.cacheMu.Lock()
	if l.paused == nil {
		l.paused = map[string]bool{}
	}
	seen := l.paused[key]
	l.paused[key] = true
	l.cacheMu.Unlock()
	if seen || report == nil || !l.Events || l.Members == nil {
		return
	}
	ns, name, _ := strings.Cut(r.Service, "/")
	for _, s := range report.Services {
		if s.Namespace != ns || s.Name != name {
			continue
		}
		for _, e := range s.Exports {
			m := l.Members.Member(e.Member)
			if m == nil {
				continue
			}
			ev := l.eventsFor(m)
			if ev == nil || m.Client == nil {
				continue
			}
			// kubectl describe finds an Event by its object's UID.
			se := &mcsv1alpha1.ServiceExport{}
			if err := m.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, se); err != nil {
				l.log().Warn("rollout paused: no Event on the export", "member", m.Name, "service", r.Service, "err", err)
				continue
			}
			se.SetGroupVersionKind(mcsv1alpha1.SchemeGroupVersion.WithKind("ServiceExport"))
			ev.Eventf(se, nil, corev1.EventTypeWarning, "RolloutPaused", "Rollout", "%s", r.Paused.String())
		}
	}
}
