// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// RejectedKind is the kind under which inputs/<member>.yaml records a live
// object that was left out because it does not load. mcs-gitops writes it
// into snapshots only; no cluster has such a resource.
const RejectedKind = "RejectedObject"

// Rejected is a live object the member's apiserver holds but this tool
// cannot load: it fails the checks Parse applies (say, an exported label
// key that no ServiceImport could carry). Collect leaves the object out and
// records it here, so the renderer reports the export it belongs to as
// Valid=False, naming the object and field, instead of one tenant's object
// failing the cycle for the whole ClusterSet.
type Rejected struct {
	// Kind is ServiceExport, Service or EndpointSlice.
	Kind      string
	Namespace string
	Name      string
	// Service is the exported service the object belongs to: its own
	// name for a ServiceExport or Service, an EndpointSlice's
	// kubernetes.io/service-name label.
	Service string
	// Message says which field is wrong and why, never the field's whole
	// content beyond what the check quotes.
	Message string
}

// Validate applies the checks Parse applies to one decoded object, for
// objects that come from an apiserver rather than from a file.
func Validate(o interface {
	GetName() string
	GetNamespace() string
}) error {
	switch o.(type) {
	case *corev1.Namespace, *networkingv1.ServiceCIDR:
		return validateObject("", o, false)
	}
	return validateObject("", o, true)
}

// RejectionMessage is the part of a Parse or Validate error that says what
// is wrong, without the file and line of a one-object parse.
func RejectionMessage(err error) string {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}

type formattedRejected struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Kind    string `json:"kind"`
		Service string `json:"service"`
		Message string `json:"message"`
	} `json:"spec"`
}

func formatRejected(r Rejected) formattedRejected {
	var f formattedRejected
	f.APIVersion, f.Kind = v1alpha1.APIVersion, RejectedKind
	f.Metadata.Name, f.Metadata.Namespace = r.Name, r.Namespace
	f.Spec.Kind, f.Spec.Service, f.Spec.Message = r.Kind, r.Service, r.Message
	return f
}

func (p *parser) rejected(line int, js []byte) error {
	var f formattedRejected
	if err := json.Unmarshal(js, &f); err != nil {
		return p.errorf(line, RejectedKind, "%v", err)
	}
	r := Rejected{Kind: f.Spec.Kind, Namespace: f.Metadata.Namespace, Name: f.Metadata.Name, Service: f.Spec.Service, Message: f.Spec.Message}
	ref := RejectedKind + " " + r.Kind + " " + r.Namespace + "/" + r.Name
	switch r.Kind {
	case "ServiceExport", "Service", "EndpointSlice":
	default:
		return p.errorf(line, ref, "spec.kind %q is not ServiceExport, Service or EndpointSlice", r.Kind)
	}
	if r.Name == "" || r.Namespace == "" || r.Service == "" || strings.TrimSpace(r.Message) == "" {
		return p.errorf(line, ref, "metadata.name, metadata.namespace, spec.service and spec.message are required")
	}
	if msgs := append(validation.IsDNS1035Label(r.Service), validation.IsDNS1123Label(r.Namespace)...); len(msgs) > 0 {
		return p.errorf(line, ref, "spec.service and metadata.namespace must name a Service: %s", strings.Join(msgs, "; "))
	}
	if first, dup := p.seen[ref]; dup {
		return p.errorf(line, ref, "duplicate object (first at %s)", first.at(p.file))
	}
	p.seen[ref] = position{p.file, line}
	p.s.Rejected = append(p.s.Rejected, r)
	return nil
}

func sortRejected(rs []Rejected) {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Kind < b.Kind
	})
}
