// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// validate checks what the types cannot say: names, uniqueness, and that a
// kubeconfig reference is exactly one thing. Field paths match the YAML so
// the loader can attach line numbers.
// reservedLabelPrefix is the label key prefix a member's labels may not
// use: render gives every member mcs-gitops.io/member, its name.
const reservedLabelPrefix = "mcs-gitops.io/"

func (c *ClusterSet) validate() ErrorList {
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	dnsLabel := func(field, v string) {
		for _, m := range validation.IsDNS1123Label(v) {
			add(field, "%q is not a valid DNS label: %s", v, m)
		}
	}
	if c.APIVersion != APIVersion {
		add("apiVersion", "must be %s, got %q", APIVersion, c.APIVersion)
	}
	if c.Kind != Kind {
		add("kind", "must be %s, got %q", Kind, c.Kind)
	}
	if c.Metadata.Name == "" {
		add("metadata.name", "required")
	} else {
		dnsLabel("metadata.name", c.Metadata.Name)
	}
	if len(c.Spec.Members) == 0 && c.Spec.Inventory == nil {
		add("spec.members", "at least one member is required (or spec.inventory)")
	}
	errs = append(errs, c.Spec.Inventory.validate("spec.inventory")...)
	names := map[string]int{}
	ids := map[string]int{}
	for i, m := range c.Spec.Members {
		p := fmt.Sprintf("spec.members[%d]", i)
		if m.Name == "" {
			add(p+".name", "required")
		} else {
			dnsLabel(p+".name", m.Name)
			if j, dup := names[m.Name]; dup {
				add(p+".name", "duplicate member name %q (also spec.members[%d])", m.Name, j)
			} else {
				names[m.Name] = i
			}
		}
		if m.ClusterID != "" {
			dnsLabel(p+".clusterID", m.ClusterID)
		}
		id := m.ClusterID
		if id == "" {
			id = m.Name
		}
		if j, dup := ids[id]; dup && id != "" {
			add(p+".clusterID", "cluster ID %q is already used by spec.members[%d]; cluster IDs must be unique", id, j)
		} else {
			ids[id] = i
		}
		for _, f := range [][2]string{{"region", m.Region}, {"zone", m.Zone}, {"group", m.Group}} {
			if f[1] != "" {
				dnsLabel(p+"."+f[0], f[1])
			}
		}
		switch m.Mode {
		case ModeFlat:
		case ModeGateway:
			if m.Gateway == nil {
				add(p+".gateway", "required in gateway mode: other members reach this member only through its gateway")
			}
		default:
			add(p+".mode", "unsupported data-path mode %q (supported: %s, %s)", m.Mode, ModeFlat, ModeGateway)
		}
		errs = append(errs, m.Kubeconfig.validate(p+".kubeconfig")...)
		if m.Kubeconfig.ClusterProfile != nil && c.Spec.Inventory == nil {
			add(p+".kubeconfig.clusterProfile", "needs spec.inventory.providerFile, the access provider file")
		}
		errs = append(errs, labelsProblems(p+".labels", m.Labels)...)
		for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
			if strings.HasPrefix(k, reservedLabelPrefix) {
				errs = append(errs, &FieldError{Field: p + ".labels", Msg: fmt.Sprintf("label key %q: keys under %s are mcs-gitops's own (%smember is the member's name, which selectors may use)", k, reservedLabelPrefix, reservedLabelPrefix)})
			}
		}
		if g := m.Gateway; g != nil {
			switch {
			case g.Host == "":
				add(p+".gateway.host", "required")
			case net.ParseIP(g.Host) == nil && len(validation.IsDNS1123Subdomain(g.Host)) > 0:
				add(p+".gateway.host", "%q is neither an IP address nor a DNS name", g.Host)
			}
			if g.Port < 1 || g.Port > 65535 {
				add(p+".gateway.port", "%d is not a port number (1-65535)", g.Port)
			}
			if g.Namespace == "" {
				add(p+".gateway.namespace", "required: the namespace of the Gateway the routes attach to")
			} else {
				dnsLabel(p+".gateway.namespace", g.Namespace)
			}
			if g.Name == "" {
				add(p+".gateway.name", "required: the name of the Gateway the routes attach to")
			} else if msgs := validation.IsDNS1123Subdomain(g.Name); len(msgs) > 0 {
				add(p+".gateway.name", "%q is not a valid object name: %s", g.Name, strings.Join(msgs, "; "))
			}
			if r := g.TCPPorts; r != nil {
				switch {
				case r.From < 1 || r.From > 65535 || r.To < 1 || r.To > 65535:
					add(p+".gateway.tcpPorts", "%d-%d is not a range of port numbers (1-65535)", r.From, r.To)
				case r.From > r.To:
					add(p+".gateway.tcpPorts", "from %d is after to %d", r.From, r.To)
				case r.Contains(g.Port):
					add(p+".gateway.tcpPorts", "%d-%d contains the HTTP listener port %d", r.From, r.To, g.Port)
				}
			}
			switch g.TCPListeners {
			case TCPListenersListenerSet, TCPListenersGateway:
			default:
				add(p+".gateway.tcpListeners", "must be %s or %s, got %q", TCPListenersListenerSet, TCPListenersGateway, g.TCPListeners)
			}
		}
	}
	switch c.Spec.Render.ServiceImportAPIVersion {
	case ServiceImportV1Alpha1, ServiceImportV1Beta1:
	default:
		add("spec.render.serviceImportAPIVersion", "must be %s or %s, got %q",
			ServiceImportV1Alpha1, ServiceImportV1Beta1, c.Spec.Render.ServiceImportAPIVersion)
	}
	errs = append(errs, c.Spec.Git.validate("spec.git")...)
	errs = append(errs, c.Spec.Sync.validate("spec.sync")...)
	errs = append(errs, c.Spec.Review.validate("spec.review", c.Spec.Git)...)
	known := c.knownMember
	errs = append(errs, c.Spec.Reach.validate("spec.reach", known)...)
	errs = append(errs, c.Spec.Rollout.validate("spec.rollout", known)...)
	return errs
}

func (k KubeconfigRef) validate(p string) ErrorList {
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	set := 0
	for _, b := range []bool{k.Path != "", k.SecretRef != nil, k.InCluster, k.ClusterProfile != nil} {
		if b {
			set++
		}
	}
	if set > 1 {
		add(p, "set only one of path, secretRef, inCluster and clusterProfile")
	}
	if r := k.ClusterProfile; r != nil {
		errs = append(errs, objectRefProblems(p+".clusterProfile", "object", r.Namespace, r.Name)...)
	}
	if strings.ContainsAny(k.Path, "\n\r") {
		add(p+".path", "%s", credentialAdvice)
	}
	if k.Context != "" && k.Path == "" {
		add(p+".context", "only meaningful with kubeconfig.path")
	}
	if s := k.SecretRef; s != nil {
		errs = append(errs, objectRefProblems(p+".secretRef", "Secret", s.Namespace, s.Name)...)
		for _, m := range validation.IsConfigMapKey(s.Key) {
			add(p+".secretRef.key", "%q is not a valid key: %s", s.Key, m)
		}
	}
	return errs
}

// knownMember says whether a name may be a member's: a hand-written
// one's, or, with an inventory, any valid name (the inventory's members
// are known only when it is read).
func (c *ClusterSet) knownMember(name string) bool {
	return c.Spec.Inventory != nil && len(validation.IsDNS1123Label(name)) == 0 ||
		slices.ContainsFunc(c.Spec.Members, func(m Member) bool { return m.Name == name })
}

func (inv *InventorySource) validate(p string) ErrorList {
	if inv == nil {
		return nil
	}
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if inv.Namespace == "" {
		add(p+".namespace", "required: the namespace of the ClusterProfiles")
	} else {
		for _, m := range validation.IsDNS1123Label(inv.Namespace) {
			add(p+".namespace", "%q is not a valid namespace: %s", inv.Namespace, m)
		}
	}
	if inv.ProviderFile == "" {
		add(p+".providerFile", "required: the access provider file that maps each profile's access providers to exec plugins")
	} else if strings.ContainsAny(inv.ProviderFile, "\n\r") {
		add(p+".providerFile", "%s", credentialAdvice)
	}
	if inv.Group != "" {
		for _, m := range validation.IsDNS1123Label(inv.Group) {
			add(p+".group", "%q is not a valid DNS label: %s", inv.Group, m)
		}
	}
	return append(errs, labelsProblems(p+".matchLabels", inv.MatchLabels)...)
}

// objectRefProblems checks a reference to a namespaced object (field
// p): both names required, the namespace a DNS label, the name a DNS
// subdomain; kind names the object in the message.
func objectRefProblems(p, kind, namespace, name string) ErrorList {
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if namespace == "" {
		add(p+".namespace", "required")
	} else {
		for _, m := range validation.IsDNS1123Label(namespace) {
			add(p+".namespace", "%q is not a valid namespace: %s", namespace, m)
		}
	}
	if name == "" {
		add(p+".name", "required")
	} else {
		for _, m := range validation.IsDNS1123Subdomain(name) {
			add(p+".name", "%q is not a valid %s name: %s", name, kind, m)
		}
	}
	return errs
}
