// SPDX-License-Identifier: Apache-2.0

package render

import (
	"maps"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// ownerPrefix is the label domain the applier's owner labels live under
// (mcs-gitops.io/clusterset, mcs-gitops.io/member).
const ownerPrefix = "mcs-gitops.io/"

// reservedLabel says whether a label key is one mcs-gitops uses to find
// what it owns: an exported label with such a key would be overwritten, or
// worse, make prune and the collision check misjudge ownership.
func reservedLabel(k string) bool { return k == ManagedByLabel || strings.HasPrefix(k, ownerPrefix) }

// reservedAnnotation says whether an annotation key is one mcs-gitops sets
// on the ServiceImport itself.
func reservedAnnotation(k string) bool {
	return k == DerivedServiceAnnotation || strings.HasPrefix(k, ownerPrefix)
}

// exportedMetadata is what of the winning export's exportedLabels and
// exportedAnnotations the ServiceImport can carry, and the keys it cannot
// because mcs-gitops uses them itself; those are reported, never silently
// overwritten.
func exportedMetadata(se *mcsv1alpha1.ServiceExport) (labels, annotations map[string]string, reserved []string) {
	labels, annotations = map[string]string{}, map[string]string{}
	for k, v := range se.Spec.ExportedLabels {
		if reservedLabel(k) {
			reserved = append(reserved, "label "+k)
			continue
		}
		labels[k] = v
	}
	for k, v := range se.Spec.ExportedAnnotations {
		if reservedAnnotation(k) {
			reserved = append(reserved, "annotation "+k)
			continue
		}
		annotations[k] = v
	}
	sort.Strings(reserved)
	return labels, annotations, reserved
}

func managedLabels(extra map[string]string) map[string]string {
	l := maps.Clone(extra)
	if l == nil {
		l = map[string]string{}
	}
	l[ManagedByLabel] = ManagedByValue
	return l
}

// serviceImport builds the ServiceImport. Only exportedLabels and
// exportedAnnotations of the winning export propagate, never the Service's
// own metadata. status.clusters is data for the applier, which writes it
// through the status subresource.
func serviceImport(apiVersion, ns, name, derived string, m *merged, contributors []string, families []corev1.IPFamily) *mcsv1alpha1.ServiceImport {
	w := m.winner
	labels, ann, _ := exportedMetadata(w.se)
	ann[DerivedServiceAnnotation] = derived
	si := &mcsv1alpha1.ServiceImport{
		TypeMeta: metav1.TypeMeta{APIVersion: mcsv1alpha1.GroupName + "/" + apiVersion, Kind: "ServiceImport"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels:      managedLabels(labels),
			Annotations: ann,
		},
		Spec: mcsv1alpha1.ServiceImportSpec{
			Ports:                 append([]mcsv1alpha1.ServicePort{}, m.ports...),
			Type:                  m.importType,
			SessionAffinity:       sessionAffinity(w.svc),
			SessionAffinityConfig: sessionAffinityConfig(w.svc),
			IPFamilies:            families,
			InternalTrafficPolicy: w.svc.Spec.InternalTrafficPolicy,
			TrafficDistribution:   w.svc.Spec.TrafficDistribution,
		},
	}
	for _, c := range contributors {
		si.Status.Clusters = append(si.Status.Clusters, mcsv1alpha1.ClusterStatus{Cluster: c})
	}
	return si
}

// derivedService is the selectorless Service that gives the import its
// cluster IP and receives the imported EndpointSlices. families are those
// the member serves of the import's. Two families are never pinned: a
// single-stack apiserver rejects ipFamilies [IPv4, IPv6] even with
// PreferDualStack, so the member's apiserver chooses, in its own order,
// which is the order families lists.
func derivedService(ns, name, derived string, m *merged, families []corev1.IPFamily) *corev1.Service {
	w := m.winner
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: derived, Namespace: ns,
			Labels: managedLabels(map[string]string{mcsv1alpha1.LabelServiceName: name}),
		},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       sessionAffinity(w.svc),
			SessionAffinityConfig: sessionAffinityConfig(w.svc),
			// internalTrafficPolicy stays on the ServiceImport only: imported
			// endpoints have no node in this cluster, so Local here would
			// drop every connection.
			TrafficDistribution: w.svc.Spec.TrafficDistribution,
		},
	}
	if m.importType == mcsv1alpha1.Headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	switch len(families) {
	case 1:
		svc.Spec.IPFamilies = families
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	case 2:
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	}
	for _, p := range m.ports {
		// targetPort is what the apiserver would default it to; setting it
		// keeps a server-side apply from seeing drift on every run.
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol, Port: p.Port, TargetPort: intstr.FromInt32(p.Port),
		})
	}
	return svc
}

// importedSlice mirrors one source EndpointSlice into an importing member.
// Pod references, node names and topology hints name objects of the source
// cluster, so they are dropped; readiness and hostnames are what DNS and
// kube-proxy need.
func importedSlice(ns, name, derived, slice string, src *discoveryv1.EndpointSlice, sourceCluster string, portNames map[string]bool) *discoveryv1.EndpointSlice {
	out := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  sliceMeta(ns, slice, name, derived, sourceCluster),
		AddressType: src.AddressType,
		Endpoints:   make([]discoveryv1.Endpoint, 0, len(src.Endpoints)),
	}
	for _, p := range src.Ports {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if portNames[name] {
			out.Ports = append(out.Ports, p)
		}
	}
	for _, e := range src.Endpoints {
		out.Endpoints = append(out.Endpoints, discoveryv1.Endpoint{
			Addresses: e.Addresses, Conditions: e.Conditions, Hostname: e.Hostname, Zone: e.Zone,
		})
	}
	return out
}

// sliceMeta is the metadata of a slice rendered for a service: named for
// the Service it feeds (target), findable by the MCS service name, kept
// from kube-controller-manager. An empty sourceCluster leaves its label
// out, for endpoints that stand for no single cluster.
func sliceMeta(ns, slice, service, target, sourceCluster string) metav1.ObjectMeta {
	l := map[string]string{
		mcsv1alpha1.LabelServiceName: service,
		discoveryv1.LabelServiceName: target,
		discoveryv1.LabelManagedBy:   EndpointSliceManager,
	}
	if sourceCluster != "" {
		l[mcsv1alpha1.LabelSourceCluster] = sourceCluster
	}
	return metav1.ObjectMeta{Name: slice, Namespace: ns, Labels: managedLabels(l)}
}

func namespaceObject(ns string) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: managedLabels(nil)},
	}
}

// readyEndpoints counts ready endpoints per address family and returns the
// largest count: a dual-stack Service has one slice per family listing the
// same pods, and adding the families up would count each pod twice.
func readyEndpoints(slices []*discoveryv1.EndpointSlice) int {
	perFamily := map[discoveryv1.AddressType]int{}
	n := 0
	for _, s := range slices {
		for _, e := range s.Endpoints {
			// A nil ready condition means unknown, which consumers treat as ready.
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				perFamily[s.AddressType]++
				n = max(n, perFamily[s.AddressType])
			}
		}
	}
	return n
}
