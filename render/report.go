// SPDX-License-Identifier: Apache-2.0

package render

import mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

// Condition is a ServiceExport condition as rendered: no timestamps, so the
// report is deterministic. The applier adds lastTransitionTime when it
// writes status to the cluster.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Report says what the renderer decided and why, for status/ and for the
// applier's status write-back.
type Report struct {
	// Warnings about the ClusterSet as a whole, e.g. a cluster ID override.
	Warnings []string `json:"warnings,omitempty"`
	// Services lists every exported service, sorted by namespace and name.
	Services []ServiceReport `json:"services"`
	// Gateways lists the members with a gateway, sorted by member.
	Gateways []GatewayReport `json:"gateways,omitempty"`
}

// ServiceReport is one namespace/name exported from at least one member.
type ServiceReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Type of the ServiceImport, empty when no export is valid.
	Type string `json:"type,omitempty"`
	// Import is what every importer's ServiceImport says of the service,
	// merged from the exports: what a reviewer compares between two
	// renders. Nil when no export is valid.
	Import *ImportSpec `json:"import,omitempty"`
	// Exports in precedence order: oldest first, ties by cluster ID.
	Exports []ExportReport `json:"exports"`
	// ImportedBy lists the members that get the ServiceImport.
	ImportedBy []string `json:"importedBy,omitempty"`
	// OutOfReach lists the members the reach policy keeps from importing
	// the service, each with the rule (spec.reach, or the export's
	// importers annotation).
	OutOfReach []OutOfReach `json:"outOfReach,omitempty"`
	// HeldImports lists members whose import of the service waits for a
	// review-mode proposal to be merged.
	HeldImports []string `json:"heldImports,omitempty"`
	// Behind lists the members a staged rollout of a change to the
	// service has not reached yet: what they import (or not) is the
	// service as it was before the change.
	Behind []string `json:"behind,omitempty"`
	// MissingNamespace lists members without the namespace; they do not
	// import the service (createMissingNamespaces is not set).
	MissingNamespace []string `json:"missingNamespace,omitempty"`
	// CreatedNamespace lists members without the namespace that import the
	// service all the same, because createMissingNamespaces is set: the
	// render creates the namespace there. Not a problem.
	CreatedNamespace []string `json:"createdNamespace,omitempty"`
	// Endpoints counts the ready endpoints each contributing member gives.
	Endpoints map[string]int `json:"endpoints,omitempty"`
	// Policies are the GlobalTrafficPolicies of the consuming members that
	// have one for this service, sorted by member.
	Policies []PolicyReport `json:"policies,omitempty"`
	// NotServed lists the importing members that cannot serve any of the
	// service's IP families: they get the ServiceImport, with this as its
	// Ready=False condition where the API has one (v1beta1), but no
	// derived Service or endpoints.
	NotServed []NotServed `json:"notServed,omitempty"`
	// Winner is the member whose export's properties the import takes,
	// when exports of the service conflict; every losing export's
	// Conflict message names it.
	Winner string `json:"winner,omitempty"`
	// PartialPorts are the import's ports some of its IP families cannot
	// reach; the exports' and imports' Ready messages name them.
	PartialPorts []PartialPort `json:"partialPorts,omitempty"`
	// Warnings about this service that are not an export's condition: a
	// member that cannot reach another's endpoints, a port a gateway cannot
	// carry.
	Warnings []string `json:"warnings,omitempty"`
}

// ImportSpec is the merged import, as the ServiceImport carries it.
type ImportSpec struct {
	Ports                 []ImportPort `json:"ports"`
	SessionAffinity       string       `json:"sessionAffinity,omitempty"`
	IPFamilies            []string     `json:"ipFamilies,omitempty"`
	InternalTrafficPolicy string       `json:"internalTrafficPolicy,omitempty"`
	TrafficDistribution   string       `json:"trafficDistribution,omitempty"`
	// ExportedLabels and ExportedAnnotations are what the winning export
	// asks the ServiceImport to carry.
	ExportedLabels      map[string]string `json:"exportedLabels,omitempty"`
	ExportedAnnotations map[string]string `json:"exportedAnnotations,omitempty"`
}

// ImportPort is one port of the merged import.
type ImportPort struct {
	Name        string `json:"name,omitempty"`
	Port        int32  `json:"port"`
	Protocol    string `json:"protocol"`
	AppProtocol string `json:"appProtocol,omitempty"`
}

// NotServed is one member a service cannot be imported into, and why.
type NotServed struct {
	Member  string `json:"member"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ReasonIPFamilyNotSupported is the ServiceImport Ready=False reason of
// mcs-api v1beta1 for a member that cannot serve the import's families.
const ReasonIPFamilyNotSupported = "IPFamilyNotSupported"

// OutOfReach is a member the reach policy keeps from importing a service.
type OutOfReach struct {
	Member string `json:"member"`
	// Rule names what keeps it out.
	Rule string `json:"rule"`
}

// ExportReport is the outcome for one ServiceExport.
type ExportReport struct {
	Member     string      `json:"member"`
	ClusterID  string      `json:"clusterID"`
	Conditions []Condition `json:"conditions"`
}

// Condition returns the condition of the given type.
func (e ExportReport) Condition(t string) (Condition, bool) { return findCondition(e.Conditions, t) }

// Condition returns the policy's condition of the given type.
func (p PolicyReport) Condition(t string) (Condition, bool) { return findCondition(p.Conditions, t) }

func findCondition(cs []Condition, t string) (Condition, bool) {
	for _, c := range cs {
		if c.Type == t {
			return c, true
		}
	}
	return Condition{}, false
}

// importSpec is what m gives every importer's ServiceImport, the fields
// serviceImport writes.
func importSpec(m *merged) *ImportSpec {
	w := m.winner
	spec := &ImportSpec{
		Ports:           []ImportPort{},
		SessionAffinity: string(sessionAffinity(w.svc)),
	}
	for _, p := range m.ports {
		spec.Ports = append(spec.Ports, reportPort(p))
	}
	for _, f := range m.families {
		spec.IPFamilies = append(spec.IPFamilies, string(f))
	}
	if p := w.svc.Spec.InternalTrafficPolicy; p != nil {
		spec.InternalTrafficPolicy = string(*p)
	}
	if d := w.svc.Spec.TrafficDistribution; d != nil {
		spec.TrafficDistribution = *d
	}
	labels, ann, _ := exportedMetadata(w.se)
	if len(labels) > 0 {
		spec.ExportedLabels = labels
	}
	delete(ann, DerivedServiceAnnotation)
	if len(ann) > 0 {
		spec.ExportedAnnotations = ann
	}
	return spec
}

func reportPort(p mcsv1alpha1.ServicePort) ImportPort {
	ip := ImportPort{Name: p.Name, Port: p.Port, Protocol: string(protocol(p.Protocol))}
	if p.AppProtocol != nil {
		ip.AppProtocol = *p.AppProtocol
	}
	return ip
}
