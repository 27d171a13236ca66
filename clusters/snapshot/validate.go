// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"errors"
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// validateObject rejects what a real apiserver would never have returned,
// so the renderer only ever sees well-formed input and its output stays
// valid. It checks the fields the renderer reads, not every field, with
// kube-apiserver v1.36's own rules (pkg/apis/core/validation and
// pkg/apis/discovery/validation), never stricter ones: what a member
// accepted must load. The exceptions are fields of ServiceExport, whose CRD
// checks nothing, that become label or annotation keys of a ServiceImport.
func validateObject(kind string, o named, namespaced bool) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.GetName() == "" {
		bad("metadata.name is required")
	}
	if namespaced {
		if o.GetNamespace() == "" {
			bad("metadata.namespace is required")
		} else if msgs := validation.IsDNS1123Label(o.GetNamespace()); len(msgs) > 0 {
			bad("metadata.namespace %q: %s", o.GetNamespace(), strings.Join(msgs, "; "))
		}
	}
	switch obj := o.(type) {
	case *corev1.Namespace:
		if msgs := validation.IsDNS1123Label(obj.Name); obj.Name != "" && len(msgs) > 0 {
			bad("metadata.name: %s", strings.Join(msgs, "; "))
		}
	case *mcsv1alpha1.ServiceExport:
		// An apiserver always sets it; without it precedence is undefined
		// and a hand-written export would silently win every conflict.
		if obj.CreationTimestamp.IsZero() {
			bad("metadata.creationTimestamp is required: the oldest export wins a conflict (an apiserver always sets it)")
		}
		if msgs := validation.IsDNS1035Label(obj.Name); obj.Name != "" && len(msgs) > 0 {
			bad("metadata.name must be a valid Service name: %s", strings.Join(msgs, "; "))
		}
		for k, v := range obj.Spec.ExportedLabels {
			for _, m := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
				bad("spec.exportedLabels[%q]: %s", k, m)
			}
		}
		for k := range obj.Spec.ExportedAnnotations {
			for _, m := range validation.IsQualifiedName(strings.ToLower(k)) {
				bad("spec.exportedAnnotations[%q]: %s", k, m)
			}
		}
	case *v1alpha1.GlobalTrafficPolicy:
		// Same namespace/name as the Service it steers, so a Service name.
		if msgs := validation.IsDNS1035Label(obj.Name); obj.Name != "" && len(msgs) > 0 {
			bad("metadata.name must be a valid Service name: %s", strings.Join(msgs, "; "))
		}
	case *corev1.Service:
		errs = append(errs, validateService(obj)...)
	case *networkingv1.ServiceCIDR:
		errs = append(errs, validateServiceCIDR(obj)...)
	case *discoveryv1.EndpointSlice:
		if msgs := validation.IsDNS1123Subdomain(obj.Name); obj.Name != "" && len(msgs) > 0 {
			bad("metadata.name: %s", strings.Join(msgs, "; "))
		}
		errs = append(errs, validateSlice(obj)...)
	}
	return errors.Join(errs...)
}

func validateService(s *corev1.Service) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if msgs := validation.IsDNS1035Label(s.Name); s.Name != "" && len(msgs) > 0 {
		bad("metadata.name: %s", strings.Join(msgs, "; "))
	}
	switch s.Spec.Type {
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
	default:
		bad("spec.type %q is not a Service type", s.Spec.Type)
	}
	names := map[string]bool{}
	for i, p := range s.Spec.Ports {
		f := fmt.Sprintf("spec.ports[%d]", i)
		if p.Name != "" {
			// kube-apiserver checks a DNS-1123 label here, not the stricter
			// IANA port name of container ports: "81-81" and "443" are valid.
			for _, m := range validation.IsDNS1123Label(p.Name) {
				bad("%s.name %q: %s", f, p.Name, m)
			}
			if names[p.Name] {
				bad("%s.name %q is used twice", f, p.Name)
			}
			names[p.Name] = true
		} else if len(s.Spec.Ports) > 1 {
			bad("%s.name is required when a Service has several ports", f)
		}
		if p.Port < 1 || p.Port > 65535 {
			bad("%s.port %d is not a port number", f, p.Port)
		}
		if err := validateProtocol(p.Protocol); err != nil {
			bad("%s.protocol: %v", f, err)
		}
		if p.AppProtocol != nil {
			for _, m := range validation.IsQualifiedName(*p.AppProtocol) {
				bad("%s.appProtocol %q: %s", f, *p.AppProtocol, m)
			}
		}
	}
	for i, fam := range s.Spec.IPFamilies {
		if fam != corev1.IPv4Protocol && fam != corev1.IPv6Protocol {
			bad("spec.ipFamilies[%d] %q is not IPv4 or IPv6", i, fam)
		}
	}
	if len(s.Spec.IPFamilies) > 2 || len(s.Spec.IPFamilies) == 2 && s.Spec.IPFamilies[0] == s.Spec.IPFamilies[1] {
		bad("spec.ipFamilies must list each family at most once")
	}
	switch s.Spec.SessionAffinity {
	case "", corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP:
	default:
		bad("spec.sessionAffinity %q is not None or ClientIP", s.Spec.SessionAffinity)
	}
	if c := s.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		if t := *c.ClientIP.TimeoutSeconds; t <= 0 || t > 86400 {
			bad("spec.sessionAffinityConfig.clientIP.timeoutSeconds %d is outside 1-86400", t)
		}
	}
	if p := s.Spec.InternalTrafficPolicy; p != nil && *p != corev1.ServiceInternalTrafficPolicyCluster && *p != corev1.ServiceInternalTrafficPolicyLocal {
		bad("spec.internalTrafficPolicy %q is not Cluster or Local", *p)
	}
	if d := s.Spec.TrafficDistribution; d != nil {
		for _, m := range validation.IsQualifiedName(*d) {
			bad("spec.trafficDistribution %q: %s", *d, m)
		}
	}
	return errs
}

func validateProtocol(p corev1.Protocol) error {
	switch p {
	case "", corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return nil
	}
	return fmt.Errorf("%q is not TCP, UDP or SCTP", p)
}

func validateSlice(s *discoveryv1.EndpointSlice) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch s.AddressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
	default:
		bad("addressType %q is not IPv4, IPv6 or FQDN", s.AddressType)
	}
	names := map[string]bool{}
	for i, p := range s.Ports {
		f := fmt.Sprintf("ports[%d]", i)
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			for _, m := range validation.IsDNS1123Label(name) {
				bad("%s.name %q: %s", f, name, m)
			}
		}
		if names[name] {
			bad("%s.name %q is used twice", f, name)
		}
		names[name] = true
		// The port number is not range-checked: kube-apiserver does not
		// check it on an EndpointSlice either.
		if p.Protocol != nil {
			if err := validateProtocol(*p.Protocol); err != nil {
				bad("%s.protocol: %v", f, err)
			}
		}
		if p.AppProtocol != nil {
			for _, m := range validation.IsQualifiedName(*p.AppProtocol) {
				bad("%s.appProtocol %q: %s", f, *p.AppProtocol, m)
			}
		}
	}
	for i, e := range s.Endpoints {
		f := fmt.Sprintf("endpoints[%d]", i)
		if len(e.Addresses) == 0 || len(e.Addresses) > 100 {
			bad("%s.addresses must hold 1 to 100 addresses", f)
		}
		for _, a := range e.Addresses {
			if !addressMatches(s.AddressType, a) {
				bad("%s.addresses: %q is not a valid %s address", f, a, s.AddressType)
			}
		}
		if e.Hostname != nil {
			for _, m := range validation.IsDNS1123Label(*e.Hostname) {
				bad("%s.hostname %q: %s", f, *e.Hostname, m)
			}
		}
	}
	if len(s.Endpoints) > 1000 {
		bad("holds %d endpoints, over the 1000 an EndpointSlice may hold", len(s.Endpoints))
	}
	return errs
}

func addressMatches(t discoveryv1.AddressType, a string) bool {
	switch t {
	case discoveryv1.AddressTypeIPv4:
		ip := net.ParseIP(a)
		return ip != nil && ip.To4() != nil && !strings.Contains(a, ":")
	case discoveryv1.AddressTypeIPv6:
		ip := net.ParseIP(a)
		return ip != nil && strings.Contains(a, ":")
	case discoveryv1.AddressTypeFQDN:
		return len(validation.IsFullyQualifiedDomainName(nil, a)) == 0
	}
	return false
}
