// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

// Format renders a snapshot as the member's snapshot file: volatile
// fields stripped, objects in a fixed order, so an unchanged cluster
// gives byte-identical output and a changed one a small diff. The output
// is a sequence of parts (SplitParts): first the member-wide objects
// (ClusterProperties, ServiceCIDRs, Namespaces), then one part per
// service, namespace by namespace, holding its ServiceExport, Service,
// EndpointSlices, GlobalTrafficPolicy and what was left out of it. Each
// part opens with a "--- # <name>" document marker, which YAML reads as a
// plain separator. The loop commits each part as a file of its own, so
// that an endpoint moving rewrites one service's part, not the member's
// whole snapshot.
func Format(s *Snapshot) ([]byte, error) {
	c := *s
	c.sort()
	parts, err := byPart(&c)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, name := range partNames(parts) {
		b, err := formatPart(name, parts[name])
		if err != nil {
			return nil, err
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

// byPart groups a sorted snapshot's objects by the part Format writes
// them in: ClusterPart for the member-wide ones, and a part per service
// for each one's ServiceExport, Service, EndpointSlices,
// GlobalTrafficPolicy and what was left out of it. Each group is sorted
// as s is.
func byPart(s *Snapshot) (map[string]*Snapshot, error) {
	parts := map[string]*Snapshot{}
	part := func(name string) *Snapshot {
		p := parts[name]
		if p == nil {
			p = &Snapshot{Member: s.Member}
			parts[name] = p
		}
		return p
	}
	if s.ClusterID != "" || len(s.GatewayAddresses) > 0 || len(s.ServiceCIDRs) > 0 || len(s.Namespaces) > 0 {
		c := part(ClusterPart)
		c.ClusterID, c.GatewayAddresses, c.ServiceCIDRs, c.Namespaces = s.ClusterID, s.GatewayAddresses, s.ServiceCIDRs, s.Namespaces
	}
	servicePart := func(ns, key, kind, name string) (*Snapshot, error) {
		p := PartName(ns, key)
		if err := checkPartName(p); err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", kind, ns, name, err)
		}
		return part(p), nil
	}
	for _, se := range s.ServiceExports {
		p, err := servicePart(se.Namespace, se.Name, "ServiceExport", se.Name)
		if err != nil {
			return nil, fmt.Errorf("ServiceExport %s/%s: %w", se.Namespace, se.Name, err)
		}
		p.ServiceExports = append(p.ServiceExports, se)
	}
	for _, svc := range s.Services {
		p, err := servicePart(svc.Namespace, svc.Name, "Service", svc.Name)
		if err != nil {
			return nil, fmt.Errorf("Service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		p.Services = append(p.Services, svc)
	}
	for _, sl := range s.EndpointSlices {
		p, err := servicePart(sl.Namespace, sliceService(sl), "EndpointSlice", sl.Name)
		if err != nil {
			return nil, fmt.Errorf("EndpointSlice %s/%s: %w", sl.Namespace, sl.Name, err)
		}
		p.EndpointSlices = append(p.EndpointSlices, sl)
	}
	for _, gtp := range s.GlobalTrafficPolicies {
		p, err := servicePart(gtp.Namespace, gtp.Name, "GlobalTrafficPolicy", gtp.Name)
		if err != nil {
			return nil, fmt.Errorf("GlobalTrafficPolicy %s/%s: %w", gtp.Namespace, gtp.Name, err)
		}
		p.GlobalTrafficPolicies = append(p.GlobalTrafficPolicies, gtp)
	}
	for _, r := range s.Rejected {
		key := r.Service
		if validation.IsDNS1123Subdomain(key) != nil {
			key = r.Name
		}
		p, err := servicePart(r.Namespace, key, r.Kind, r.Name)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s/%s: %w", RejectedKind, r.Kind, r.Namespace, r.Name, err)
		}
		p.Rejected = append(p.Rejected, r)
	}
	return parts, nil
}

func partNames(parts map[string]*Snapshot) []string {
	names := make([]string, 0, len(parts))
	for name := range parts {
		names = append(names, name)
	}
	slices.SortFunc(names, ComparePartNames)
	return names
}

// formatPart writes part name of the snapshot, s holding its objects
// (byPart): its marker, then its objects kind by kind.
func formatPart(name string, s *Snapshot) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(partMarker(name))
	first := true
	emit := func(obj any) error {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if !first {
			buf.WriteString("---\n")
		}
		first = false
		buf.Write(b)
		return nil
	}
	if s.ClusterID != "" {
		if err := emit(map[string]any{
			"apiVersion": "about.k8s.io/v1alpha1",
			"kind":       "ClusterProperty",
			"metadata":   map[string]any{"name": ClusterIDProperty},
			"spec":       map[string]any{"value": s.ClusterID},
		}); err != nil {
			return nil, err
		}
	}
	if len(s.GatewayAddresses) > 0 {
		// Normalized here too, so a snapshot built in code formats to
		// what Parse accepts and to the same bytes as its parsed self.
		addrs, err := NormalizeGatewayAddresses(s.GatewayAddresses)
		if err != nil {
			return nil, fmt.Errorf("member %q: gateway addresses: %w", s.Member, err)
		}
		if err := emit(map[string]any{
			"apiVersion": "about.k8s.io/v1alpha1",
			"kind":       "ClusterProperty",
			"metadata":   map[string]any{"name": GatewayAddressesProperty},
			"spec":       map[string]any{"value": formatGatewayAddresses(addrs)},
		}); err != nil {
			return nil, err
		}
	}
	for _, sc := range s.ServiceCIDRs {
		out := NormalizeServiceCIDR(sc)
		if err := emit(&out); err != nil {
			return nil, fmt.Errorf("ServiceCIDR %s: %w", sc.Name, err)
		}
	}
	for _, ns := range s.Namespaces {
		out := corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			// The UID says whether a namespace was recreated under the
			// same name (the withdrawal guard's looksWiped); it changes
			// only then.
			ObjectMeta: metav1.ObjectMeta{Name: ns.Name, UID: ns.UID, DeletionTimestamp: ns.DeletionTimestamp},
			Status:     corev1.NamespaceStatus{Phase: ns.Status.Phase},
		}
		if err := emit(&out); err != nil {
			return nil, fmt.Errorf("Namespace %s: %w", ns.Name, err)
		}
	}
	for _, se := range s.ServiceExports {
		out := mcsv1alpha1.ServiceExport{
			TypeMeta: metav1.TypeMeta{APIVersion: mcsv1alpha1.GroupVersion.String(), Kind: "ServiceExport"},
			// creationTimestamp decides conflicts: oldest export wins.
			ObjectMeta: metav1.ObjectMeta{
				Name: se.Name, Namespace: se.Namespace,
				CreationTimestamp: se.CreationTimestamp, DeletionTimestamp: se.DeletionTimestamp,
				Annotations: exportAnnotations(se.Annotations),
			},
			Spec: se.Spec,
		}
		if err := emit(&out); err != nil {
			return nil, fmt.Errorf("ServiceExport %s/%s: %w", se.Namespace, se.Name, err)
		}
	}
	for _, svc := range s.Services {
		out := normalizeService(svc)
		if err := emit(&out); err != nil {
			return nil, fmt.Errorf("Service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
	}
	for _, sl := range s.EndpointSlices {
		out := normalizeSlice(sl)
		if err := emit(&out); err != nil {
			return nil, fmt.Errorf("EndpointSlice %s/%s: %w", sl.Namespace, sl.Name, err)
		}
	}
	for _, gtp := range s.GlobalTrafficPolicies {
		out := normalizePolicy(gtp)
		if err := emit(&out); err != nil {
			return nil, fmt.Errorf("GlobalTrafficPolicy %s/%s: %w", gtp.Namespace, gtp.Name, err)
		}
	}
	for _, r := range s.Rejected {
		if err := emit(formatRejected(r)); err != nil {
			return nil, fmt.Errorf("%s %s %s/%s: %w", RejectedKind, r.Kind, r.Namespace, r.Name, err)
		}
	}
	return buf.Bytes(), nil
}

// sliceService is the service whose part a slice goes in: the one its
// kubernetes.io/service-name label names, or, without a label that can
// name a Service, the slice itself.
func sliceService(sl discoveryv1.EndpointSlice) string {
	if name := sl.Labels[discoveryv1.LabelServiceName]; len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	return sl.Name
}

// normalizeService keeps the fields the KEP-1645 rules read. Allocated
// addresses and node ports change when a Service is recreated and mean
// nothing in another cluster; only headlessness is kept.
func normalizeService(svc corev1.Service) corev1.Service {
	spec := svc.Spec
	out := corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace},
		Spec: corev1.ServiceSpec{
			Type:                  spec.Type,
			SessionAffinity:       spec.SessionAffinity,
			SessionAffinityConfig: spec.SessionAffinityConfig,
			IPFamilies:            spec.IPFamilies,
			IPFamilyPolicy:        spec.IPFamilyPolicy,
			InternalTrafficPolicy: spec.InternalTrafficPolicy,
			TrafficDistribution:   spec.TrafficDistribution,
			ExternalName:          spec.ExternalName,
		},
	}
	if spec.ClusterIP == corev1.ClusterIPNone {
		out.Spec.ClusterIP = corev1.ClusterIPNone
	}
	for _, p := range spec.Ports {
		out.Spec.Ports = append(out.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol, Port: p.Port, TargetPort: p.TargetPort,
		})
	}
	return out
}

// normalizeSlice drops pod references, node names and topology hints: they
// name objects of the source cluster and churn with every rollout.
func normalizeSlice(sl discoveryv1.EndpointSlice) discoveryv1.EndpointSlice {
	out := discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Name: sl.Name, Namespace: sl.Namespace, Labels: map[string]string{},
		},
		AddressType: sl.AddressType,
		Ports:       sl.Ports,
	}
	for _, k := range []string{discoveryv1.LabelServiceName, discoveryv1.LabelManagedBy} {
		if v, ok := sl.Labels[k]; ok {
			out.Labels[k] = v
		}
	}
	for _, e := range sl.Endpoints {
		out.Endpoints = append(out.Endpoints, discoveryv1.Endpoint{
			Addresses: e.Addresses, Conditions: e.Conditions, Hostname: e.Hostname, Zone: e.Zone,
		})
	}
	return out
}

// Normalize formats s and parses the bytes back, so the snapshot a live
// member gives is exactly the one its committed file gives: whatever a
// render makes of it, render --check makes of the commit's inputs/. file
// names the snapshot in errors.
func Normalize(s *Snapshot, file string) ([]byte, *Snapshot, error) {
	data, err := Format(s)
	if err != nil {
		return nil, nil, fmt.Errorf("format snapshot: %w", err)
	}
	n, err := Parse(s.Member, file, data)
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot does not load back: %w", err)
	}
	return data, n, nil
}

// ImportersAnnotation on a ServiceExport names, as a label selector over
// the members' labels, the members that should import it (render reads
// it within spec.reach). It is the one annotation of an export the
// snapshot keeps.
const ImportersAnnotation = "mcs-gitops.io/importers"

// exportAnnotations is what a snapshot keeps of an export's annotations.
func exportAnnotations(a map[string]string) map[string]string {
	v, ok := a[ImportersAnnotation]
	if !ok {
		return nil
	}
	return map[string]string{ImportersAnnotation: v}
}
