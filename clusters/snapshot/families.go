// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultServiceCIDR is the ServiceCIDR kube-apiserver creates from its
// --service-cluster-ip-range; its first range is the cluster's primary
// family.
const DefaultServiceCIDR = "kubernetes"

// IPFamilies are the families the member can allocate Service cluster IPs
// in, primary first (the first range of the default ServiceCIDR, as
// kube-apiserver orders a PreferDualStack Service's families). nil means
// unknown: the snapshot holds no ServiceCIDR (written by hand, or the
// member predates the ServiceCIDR API), and the renderer then assumes the
// member serves whatever a service asks for.
func (s *Snapshot) IPFamilies() []corev1.IPFamily {
	var out []corev1.IPFamily
	add := func(sc *networkingv1.ServiceCIDR) {
		for _, c := range sc.Spec.CIDRs {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				continue // Parse refuses these; a snapshot built in code may not
			}
			f := corev1.IPv4Protocol
			if !p.Addr().Is4() {
				f = corev1.IPv6Protocol
			}
			if len(out) < 2 && (len(out) == 0 || out[0] != f) {
				out = append(out, f)
			}
		}
	}
	for i := range s.ServiceCIDRs {
		if s.ServiceCIDRs[i].Name == DefaultServiceCIDR {
			add(&s.ServiceCIDRs[i])
		}
	}
	for i := range s.ServiceCIDRs {
		if s.ServiceCIDRs[i].Name != DefaultServiceCIDR {
			add(&s.ServiceCIDRs[i])
		}
	}
	return out
}

// validateServiceCIDR checks what IPFamilies reads, as kube-apiserver does:
// one or two CIDRs, of different families when two.
func validateServiceCIDR(sc *networkingv1.ServiceCIDR) []error {
	var errs []error
	if n := len(sc.Spec.CIDRs); n == 0 || n > 2 {
		errs = append(errs, fmt.Errorf("spec.cidrs must hold one or two ranges, got %d", n))
	}
	var fams []bool
	for i, c := range sc.Spec.CIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil || p.Masked() != p {
			errs = append(errs, fmt.Errorf("spec.cidrs[%d] %q is not a valid CIDR", i, c))
			continue
		}
		fams = append(fams, p.Addr().Is4())
	}
	if len(fams) == 2 && fams[0] == fams[1] {
		errs = append(errs, fmt.Errorf("spec.cidrs must be of different IP families"))
	}
	return errs
}

// NormalizeServiceCIDR keeps the name and the ranges, the form
// Snapshot.ServiceCIDRs holds whether collected or parsed.
func NormalizeServiceCIDR(sc networkingv1.ServiceCIDR) networkingv1.ServiceCIDR {
	return networkingv1.ServiceCIDR{
		TypeMeta:   metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "ServiceCIDR"},
		ObjectMeta: metav1.ObjectMeta{Name: sc.Name},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: sc.Spec.CIDRs},
	}
}

func sortServiceCIDRs(items []networkingv1.ServiceCIDR) {
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
}
