// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/render"
)

var serviceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Service"}

// writeImportIPs sets ServiceImport spec.ips to the cluster IPs the member
// allocated to the derived Service, under its own field manager: the
// rendered manifest never says spec.ips, so the next apply by "mcs-gitops"
// neither conflicts with nor reverts it, and ssa sees no drift. A Headless
// import (or one whose derived Service is not ours) has no ips; ips this
// manager set before are then released. live is the import as the member
// holds it; the import as it is afterwards is returned.
func (a *Applier) writeImportIPs(ctx context.Context, si, live *unstructured.Unstructured, applied map[objKey]bool, created map[objKey]*unstructured.Unstructured, note func(string)) (*unstructured.Unstructured, error) {
	id := describe(si)
	var want []string
	typ, _, _ := unstructured.NestedString(si.Object, "spec", "type")
	derived := si.GetAnnotations()[render.DerivedServiceAnnotation]
	svcKey := objKey{GroupKind: serviceGVK.GroupKind(), Namespace: si.GetNamespace(), Name: derived}
	if typ == "ClusterSetIP" && derived != "" && applied[svcKey] {
		svc, err := a.live(ctx, serviceGVK, svcKey, created)
		if err != nil && !apierrors.IsNotFound(err) {
			return live, fmt.Errorf("spec.ips of %s: reading derived Service %s: %w", id, derived, err)
		}
		ips, _, _ := unstructured.NestedStringSlice(svc.Object, "spec", "clusterIPs")
		fams, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ipFamilies")
		want = orderByFamily(ips, fams)
	}

	have, _, _ := unstructured.NestedStringSlice(live.Object, "spec", "ips")
	owned := managedBy(live, IPsFieldManager)
	if len(want) == 0 && (len(have) == 0 || !owned) || len(want) > 0 && owned && slices.Equal(want, have) {
		return live, nil
	}
	u := skeleton(si.GroupVersionKind(), si.GetNamespace(), si.GetName())
	if len(want) > 0 {
		u.Object["spec"] = map[string]any{"ips": toAny(want)}
	}
	err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(IPsFieldManager), client.ForceOwnership)
	if err != nil {
		return live, fmt.Errorf("spec.ips of %s: %w", id, err)
	}
	note(id + " spec.ips")
	// The apply's answer is the import as it is now, its generation
	// raised: the status written next records that generation.
	return u, nil
}

// orderByFamily lists the cluster IPs in the order of the import's
// ipFamilies, leaving out any of another family, so that spec.ips and
// spec.ipFamilies agree index by index (KEP-1645, and what the conformance
// suite checks). Without families every IP is kept in the Service's order.
func orderByFamily(ips, families []string) []string {
	var valid []netip.Addr
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			valid = append(valid, a)
		}
	}
	var out []string
	if len(families) == 0 {
		for _, a := range valid {
			out = append(out, a.String())
		}
		return out
	}
	for _, f := range families {
		for _, a := range valid {
			if (f == "IPv4") == a.Is4() {
				out = append(out, a.String())
				break
			}
		}
	}
	return out
}

func managedBy(u metav1.Object, manager string) bool {
	for _, mf := range u.GetManagedFields() {
		if mf.Manager == manager {
			return true
		}
	}
	return false
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// importsOfTaken are the imports the memory knows unchanged whose derived
// Service was applied now (taken): one the member refused until an
// admission policy let it, say. The import did not change, but its
// spec.ips are the Service's cluster IPs, which it did not have.
func importsOfTaken(desired []desiredObject, known, applied map[objKey]bool) []desiredObject {
	var out []desiredObject
	for _, d := range desired {
		if d.key.GroupKind != serviceImportGK || !known[d.key] {
			continue
		}
		derived := d.obj.GetAnnotations()[render.DerivedServiceAnnotation]
		if derived != "" && applied[objKey{GroupKind: serviceGVK.GroupKind(), Namespace: d.key.Namespace, Name: derived}] {
			out = append(out, d)
		}
	}
	return out
}
