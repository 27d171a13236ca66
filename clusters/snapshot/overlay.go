// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// With merges an application's manifests into the snapshot, as applying
// them to the member would leave it, for a what-if render: its Namespaces,
// Services, ServiceExports and GlobalTrafficPolicies replace the objects of
// the same namespace and name, or are added. What the apiserver would keep
// of a live object is kept: a Service's cluster IPs and IP families when
// the manifest sets none (they are immutable, and assigned, not written),
// an export's creationTimestamp (the oldest export wins a conflict); a new
// export is created at now. EndpointSlices are the member's: an app's
// manifests have none, and its pods do not run yet.
func (s *Snapshot) With(app *Snapshot, now time.Time) {
	created := metav1.NewTime(now.UTC().Truncate(time.Second))
	for _, n := range app.Namespaces {
		s.Namespaces = upsert(s.Namespaces, n, func(old, n *corev1.Namespace) { n.CreationTimestamp = old.CreationTimestamp; n.UID = old.UID })
	}
	for _, svc := range app.Services {
		s.Services = upsert(s.Services, svc, func(old, n *corev1.Service) {
			if n.Spec.ClusterIP == "" {
				n.Spec.ClusterIP, n.Spec.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
			}
			if len(n.Spec.IPFamilies) == 0 {
				n.Spec.IPFamilies, n.Spec.IPFamilyPolicy = old.Spec.IPFamilies, old.Spec.IPFamilyPolicy
			}
			n.CreationTimestamp, n.UID = old.CreationTimestamp, old.UID
		})
	}
	for _, se := range app.ServiceExports {
		if se.CreationTimestamp.IsZero() {
			se.CreationTimestamp = created
		}
		s.ServiceExports = upsert(s.ServiceExports, se, func(old, n *mcsv1alpha1.ServiceExport) { n.CreationTimestamp, n.UID = old.CreationTimestamp, old.UID })
	}
	for _, p := range app.GlobalTrafficPolicies {
		s.GlobalTrafficPolicies = upsert(s.GlobalTrafficPolicies, p, func(old, n *v1alpha1.GlobalTrafficPolicy) { n.CreationTimestamp = old.CreationTimestamp })
	}
	for ref, pos := range app.Positions {
		if s.Positions == nil {
			s.Positions = map[string]Position{}
		}
		s.Positions[ref] = pos
	}
	s.sort()
}

// Without removes from the snapshot the Services, ServiceExports and
// GlobalTrafficPolicies the manifests name, as deleting them would: a
// what-if for a pull request that deletes an app's export. Namespaces stay
// (a namespace holds more than one app's objects).
func (s *Snapshot) Without(app *Snapshot) {
	s.Services = remove(s.Services, app.Services)
	s.ServiceExports = remove(s.ServiceExports, app.ServiceExports)
	s.GlobalTrafficPolicies = remove(s.GlobalTrafficPolicies, app.GlobalTrafficPolicies)
}

// upsert replaces the item of x's namespace and name with x, after keep
// copied into x what the live one keeps, or appends x.
func upsert[T any, PT interface {
	*T
	named
}](items []T, x T, keep func(old, n PT)) []T {
	n := PT(&x)
	for i := range items {
		old := PT(&items[i])
		if old.GetNamespace() == n.GetNamespace() && old.GetName() == n.GetName() {
			keep(old, n)
			items[i] = x
			return items
		}
	}
	return append(items, x)
}

func remove[T any, PT interface {
	*T
	named
}](items, gone []T) []T {
	out := items[:0]
	for i := range items {
		it := PT(&items[i])
		drop := false
		for j := range gone {
			g := PT(&gone[j])
			drop = drop || (g.GetNamespace() == it.GetNamespace() && g.GetName() == it.GetName())
		}
		if !drop {
			out = append(out, items[i])
		}
	}
	return out
}
