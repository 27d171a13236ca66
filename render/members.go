// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// member is one ClusterSet member with its snapshot, as the rules see it.
type member struct {
	name      string
	clusterID string
	// key is the cluster key region/zone/group/name traffic policies use.
	key  string
	mode v1alpha1.DataPathMode
	mesh bool
	// gw is the member's gateway, nil when it has none.
	gw   *gateway
	snap *snapshot.Snapshot
	// namespaces that exist and are not being deleted.
	namespaces map[string]bool
	// policies by namespace/name.
	policies map[string]*v1alpha1.GlobalTrafficPolicy
	// families the member can allocate Service IPs in, primary first;
	// nil when unknown (no ServiceCIDR in its snapshot).
	families []corev1.IPFamily
	// labels are spec.members[].labels, for spec.reach's selectors.
	labels map[string]string
}

// servedFamilies are the families of an import that member m can serve,
// in m's order (its primary first, as its apiserver orders a dual-stack
// Service's). An unknown side leaves the other's; ok is false when both
// are known and share no family.
func (m *member) servedFamilies(imp []corev1.IPFamily) (served []corev1.IPFamily, ok bool) {
	switch {
	case len(imp) == 0:
		return m.families, true
	case len(m.families) == 0:
		return imp, true
	}
	for _, f := range m.families {
		if slices.Contains(imp, f) {
			served = append(served, f)
		}
	}
	return served, len(served) > 0
}

// resolveMembers pairs config members with snapshots and settles cluster
// IDs. A config override wins over the member's ClusterProperty, because it
// is the ClusterSet admin's explicit word; a disagreement is reported.
func resolveMembers(cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot) ([]*member, []string, error) {
	byName := map[string]*snapshot.Snapshot{}
	for _, s := range snaps {
		if _, ok := cfg.Member(s.Member); !ok {
			return nil, nil, fmt.Errorf("snapshot for %q: no such member in ClusterSet %q", s.Member, cfg.Metadata.Name)
		}
		if byName[s.Member] != nil {
			return nil, nil, fmt.Errorf("member %q: two snapshots", s.Member)
		}
		byName[s.Member] = s
	}
	var warnings []string
	type idSource struct{ name, from string }
	ids := map[string]idSource{}
	out := make([]*member, 0, len(cfg.Spec.Members))
	for _, cm := range cfg.Spec.Members {
		s := byName[cm.Name]
		if s == nil {
			return nil, nil, fmt.Errorf("member %q: no snapshot", cm.Name)
		}
		id, from := cm.Name, "its member name"
		switch {
		case cm.ClusterID != "":
			id, from = cm.ClusterID, "spec.members[].clusterID"
			if s.ClusterID != "" && s.ClusterID != cm.ClusterID {
				warnings = append(warnings, fmt.Sprintf("member %q: clusterID %q in clusterset.yaml overrides the cluster's own ClusterProperty %q", cm.Name, cm.ClusterID, s.ClusterID))
			}
		case s.ClusterID != "":
			id, from = s.ClusterID, "ClusterProperty "+snapshot.ClusterIDProperty+" at "+s.ClusterIDAt
		}
		// The ID becomes a label value, which is stricter than KEP-2149's
		// 128-character subdomain.
		if msgs := validation.IsDNS1123Label(id); len(msgs) > 0 {
			return nil, nil, fmt.Errorf("member %q: cluster ID %q (from %s) cannot be used as the %s label value: %s; set spec.members[].clusterID",
				cm.Name, id, from, "multicluster.kubernetes.io/source-cluster", strings.Join(msgs, "; "))
		}
		if other, dup := ids[id]; dup {
			return nil, nil, fmt.Errorf("members %q (cluster ID from %s) and %q (from %s) both have cluster ID %q; cluster IDs must be unique in a ClusterSet",
				other.name, other.from, cm.Name, from, id)
		}
		ids[id] = idSource{cm.Name, from}
		m := &member{name: cm.Name, clusterID: id, key: cm.Key(), mode: cm.Mode, mesh: cm.Mesh, snap: s,
			namespaces: map[string]bool{}, policies: map[string]*v1alpha1.GlobalTrafficPolicy{}, families: s.IPFamilies(), labels: cm.Labels}
		if m.mode == "" {
			m.mode = v1alpha1.ModeFlat
		}
		if cm.Gateway != nil {
			m.gw = newGateway(cm.Gateway, s.GatewayAddresses)
		}
		for i := range s.GlobalTrafficPolicies {
			p := &s.GlobalTrafficPolicies[i]
			m.policies[p.Namespace+"/"+p.Name] = p
		}
		for _, ns := range s.Namespaces {
			if ns.DeletionTimestamp == nil && ns.Status.Phase != corev1.NamespaceTerminating {
				m.namespaces[ns.Name] = true
			}
		}
		out = append(out, m)
	}
	return out, warnings, nil
}
