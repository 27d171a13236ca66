// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// reservedLabelPrefix is the prefix of mcs-gitops's own member labels,
// which a profile's labels may not set (clusterset.yaml refuses them too).
const reservedLabelPrefix = "mcs-gitops.io/"

// Membership is the record of the members profiles give, in name order.
// A profile's member is named after it (MemberName); one whose member
// name is a hand-written member's (configured maps each hand-written
// member to its cluster ID, or its name when it has none) is left to
// that member; one that cannot be a member (its cluster ID property is
// not a DNS label, or its member name or cluster ID is taken) is refused
// with the reason, so the record says why a cluster is missing.
func Membership(src *v1alpha1.InventorySource, profiles []*Profile, configured map[string]string) *layout.InventoryRecord {
	r := &layout.InventoryRecord{Namespace: src.Namespace, MatchLabels: src.MatchLabels}
	ids := map[string]string{}
	for name, id := range configured {
		ids[id] = "hand-written member " + name
	}
	names := map[string]string{}
	ps := slices.Clone(profiles)
	slices.SortFunc(ps, func(a, b *Profile) int { return strings.Compare(a.Name, b.Name) })
	refuse := func(p *Profile, format string, args ...any) {
		r.Refused = append(r.Refused, layout.InventoryRefusal{Profile: p.Ref(), Reason: fmt.Sprintf(format, args...)})
	}
	for _, p := range ps {
		name := MemberName(p.Name)
		if _, ok := configured[name]; ok {
			refuse(p, "member %s is written in clusterset.yaml; that one is used", name)
			continue
		}
		if other, taken := names[name]; taken {
			refuse(p, "its member name %q is already ClusterProfile %s's", name, other)
			continue
		}
		id, hasID := p.Property(PropertyClusterID)
		if hasID {
			if msgs := validation.IsDNS1123Label(id); len(msgs) > 0 {
				refuse(p, "its %s property %q is not a DNS label: %s", PropertyClusterID, id, strings.Join(msgs, "; "))
				continue
			}
		} else {
			id = name
		}
		if other, taken := ids[id]; taken {
			refuse(p, "its cluster ID %q is already %s's", id, other)
			continue
		}
		ids[id], names[name] = "member "+name, p.Ref()
		m := layout.InventoryMember{Name: name, Profile: p.Ref(), ClusterManager: p.Spec.ClusterManager.Name, Labels: memberLabels(p.Labels),
			Region: labelProperty(p, PropertyRegion), Zone: labelProperty(p, PropertyZone)}
		if hasID {
			m.ClusterID = id
		}
		r.Members = append(r.Members, m)
	}
	return r
}

// MemberName is the member a ClusterProfile of that name makes: the name
// itself when it is a DNS label, as member names must be (they name
// directories and label values). Otherwise (an object name may have dots
// and 253 characters) the name with every character but letters and
// digits a dash, cut to fit, and a hash of the whole name appended, so
// that two profiles cannot map to one member.
func MemberName(profile string) string {
	if len(validation.IsDNS1123Label(profile)) == 0 {
		return profile
	}
	b := []byte(strings.ToLower(profile))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	sum := sha256.Sum256([]byte(profile))
	const hashLen = 8
	base := strings.Trim(string(b), "-")
	if room := validation.DNS1123LabelMaxLength - hashLen - 1; len(base) > room {
		base = strings.TrimRight(base[:room], "-")
	}
	if base == "" {
		base = "cluster"
	}
	return base + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

// labelProperty is the value of a profile's property when it is a DNS
// label (a region or zone becomes part of the member's cluster key).
func labelProperty(p *Profile, name string) string {
	v, ok := p.Property(name)
	if !ok || len(validation.IsDNS1123Label(v)) > 0 {
		return ""
	}
	return v
}

// memberLabels are a profile's labels but mcs-gitops's own.
func memberLabels(in map[string]string) map[string]string {
	var out map[string]string
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if strings.HasPrefix(k, reservedLabelPrefix) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = in[k]
	}
	return out
}

// Unhealthy says whether the profile's cluster manager reports the
// control plane unhealthy (ControlPlaneHealthy False), and what it says.
// No condition, or Unknown, is not a verdict: the member is read and
// found reachable or not.
func (p *Profile) Unhealthy() (bool, string) {
	for _, c := range p.Status.Conditions {
		if c.Type != ConditionControlPlaneHealthy || c.Status != metav1.ConditionFalse {
			continue
		}
		msg := c.Reason
		if c.Message != "" {
			msg += ": " + c.Message
		}
		return true, msg
	}
	return false, ""
}

// Resolve is the membership to put in force, given what the list of the
// profiles gave (profiles, or listErr) and what the last commit records
// (committed, nil when nothing). A list that failed, or that is empty
// while committed has members, is held: committed stands, marked Held
// with why, and held is true. A failed list with nothing committed is an
// error: there is no membership to stand in.
func Resolve(src *v1alpha1.InventorySource, profiles []*Profile, listErr error, configured map[string]string,
	committed *layout.InventoryRecord) (r *layout.InventoryRecord, held bool, err error) {
	hasCommitted := committed != nil && len(committed.Members) > 0
	switch {
	case listErr != nil && !hasCommitted:
		return nil, false, listErr
	case listErr != nil:
		return holding(committed, "the inventory could not be listed; the members committed stay until it can be (the error is in the log)"), true, nil
	case len(profiles) == 0 && hasCommitted:
		return holding(committed, fmt.Sprintf("the inventory lists no ClusterProfile where the last commit had %d members; they stay, read with the credentials last built, until a profile is listed again or spec.inventory is removed", len(committed.Members))), true, nil
	}
	return Membership(src, profiles, configured), false, nil
}

// holding is the committed membership, marked held with why.
func holding(committed *layout.InventoryRecord, why string) *layout.InventoryRecord {
	r := *committed
	r.Held = why
	return &r
}
