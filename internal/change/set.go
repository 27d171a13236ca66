// SPDX-License-Identifier: Apache-2.0

package change

import (
	"fmt"
	"strings"
)

// Set is what a change does, service by service, sorted by namespace and
// name; services the change leaves alone are not in it.
type Set struct {
	Services []Service `json:"services"`
	// Members are the members joining or leaving the ClusterSet, going
	// unreachable or stale, or coming back, when the caller knows both
	// sides' members (MembersBetween).
	Members []Member `json:"members,omitempty"`
	// Gateways are how the members' gateways change: where the others
	// reach them, and the listener ports they give exported TCP ports.
	Gateways []Gateway `json:"gateways,omitempty"`
}

// Service is what a change does to one service. Every list is sorted by
// member, and every entry carries its old and new value.
type Service struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Gained and Lost are the members that start or stop reaching the
	// service (Reaching: importing it in an IP family they serve): who
	// can now reach it, and who no longer can.
	Gained []string `json:"reachGained,omitempty"`
	Lost   []string `json:"reachLost,omitempty"`
	// Exports are the members whose export appeared, went, or became valid
	// or invalid.
	Exports []Export `json:"exports,omitempty"`
	// Fields are the properties of the merged import that changed.
	Fields []Field `json:"fields,omitempty"`
	// Conflicts are the exports whose Conflict condition appeared, went
	// or changed reason.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Policies are the consumers whose GlobalTrafficPolicy changed where
	// their traffic goes.
	Policies []Policy `json:"policies,omitempty"`
	// Endpoints counts each exporter's ready endpoints before and after;
	// endpoint churn is counted, never listed.
	Endpoints []Count `json:"endpoints,omitempty"`
	// NamespaceCreated are the members where the render starts creating
	// the service's namespace (createMissingNamespaces: the member lacks
	// it and imports the service); NamespaceNotCreated where it stops.
	NamespaceCreated    []string `json:"namespaceCreated,omitempty"`
	NamespaceNotCreated []string `json:"namespaceNotCreated,omitempty"`
}

// Export is one member's export of a service: its state before and after.
type Export struct {
	Member string      `json:"member"`
	Old    ExportState `json:"old"`
	New    ExportState `json:"new"`
}

// ExportState is an export's state in one render: absent (""), Valid,
// NotReady, PendingReview, or the reason it is invalid.
type ExportState string

const (
	// Valid is the state of an export that serves the import.
	Valid ExportState = "Valid"
	// NotReady is a valid export that serves nothing: every port lost a
	// conflict, or no member can reach it (Ready=False).
	NotReady ExportState = "NotReady"
	// PendingReview is a valid export review mode holds back until a
	// person approves it (Ready=False with this reason, written by
	// internal/review/propose): it serves nothing yet, and is not an
	// export that stopped serving.
	PendingReview ExportState = "PendingReview"
)

// Serving reports whether an export in state st serves its service.
func (st ExportState) Serving() bool { return st == Valid }

// Field is one property of the merged import. Name says which: "type",
// "port http" (ports by name, or by number/protocol when unnamed),
// "sessionAffinity", "ipFamilies", "internalTrafficPolicy",
// "trafficDistribution", "label KEY", "annotation KEY". An empty Old is a
// port, label or annotation added; an empty New one removed.
type Field struct {
	Name string `json:"name"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// String says the change in words, old -> new: "port http 8000/TCP ->
// 8001/TCP", "port grpc added (9090/TCP)", "label team removed".
func (f Field) String() string {
	kind, key, _ := strings.Cut(f.Name, " ")
	switch {
	case kind == "port" && f.Old == "":
		return fmt.Sprintf("port %s added (%s)", key, f.New)
	case kind == "port" && f.New == "":
		return fmt.Sprintf("port %s removed (was %s)", key, f.Old)
	case (kind == "label" || kind == "annotation") && f.Old == "":
		return fmt.Sprintf("%s %s=%s added", kind, key, f.New)
	case (kind == "label" || kind == "annotation") && f.New == "":
		return fmt.Sprintf("%s %s removed", kind, key)
	}
	return fmt.Sprintf("%s %s -> %s", f.Name, orNone(f.Old), orNone(f.New))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Conflict is one export's Conflict condition: "" when none, else its
// reason (PortConflict, TypeConflict, ... joined by commas) and message.
type Conflict struct {
	Member     string `json:"member"`
	Old        string `json:"old,omitempty"`
	New        string `json:"new,omitempty"`
	OldMessage string `json:"oldMessage,omitempty"`
	NewMessage string `json:"newMessage,omitempty"`
}

// Policy is one consumer's traffic policy for the service; nil when it
// has none.
type Policy struct {
	Member string       `json:"member"`
	Old    *PolicyState `json:"old,omitempty"`
	New    *PolicyState `json:"new,omitempty"`
}

// PolicyState is where a policy sends the consumer's traffic: its mode,
// the clusters its derived Service gets (in priority order) and the
// weights of a weighted route.
type PolicyState struct {
	Mode     string           `json:"mode"`
	Clusters []string         `json:"clusters"`
	Weights  map[string]int32 `json:"weights,omitempty"`
}

// Count is one member's ready endpoints for the service before and after.
type Count struct {
	Member string `json:"member"`
	Old    int    `json:"old"`
	New    int    `json:"new"`
}

// Key is "namespace/name".
func (s Service) Key() string { return s.Namespace + "/" + s.Name }

// ExportersAdded are the members whose export now contributes and did
// not: a new export, or one that became valid.
func (s Service) ExportersAdded() []string {
	var out []string
	for _, e := range s.Exports {
		if e.New == Valid && e.Old != Valid {
			out = append(out, e.Member)
		}
	}
	return out
}

// ExportersRemoved are the members whose export contributed and no
// longer does: withdrawn, or invalid now.
func (s Service) ExportersRemoved() []string {
	var out []string
	for _, e := range s.Exports {
		if e.Old == Valid && e.New != Valid {
			out = append(out, e.Member)
		}
	}
	return out
}
