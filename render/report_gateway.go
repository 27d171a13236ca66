// SPDX-License-Identifier: Apache-2.0

package render

// PolicyReport is the outcome of one GlobalTrafficPolicy: what the
// consuming member's derived Service gets. The applier writes it to the
// policy's status.
type PolicyReport struct {
	// Member is the consuming member the policy lives in.
	Member string `json:"member"`
	LbType string `json:"lbType"`
	// Conditions are Accepted and Applied, as on the policy's status.
	Conditions []Condition `json:"conditions"`
	// Clusters are the cluster IDs whose endpoints the derived Service
	// gets, in priority order.
	Clusters []string `json:"clusters,omitempty"`
	// Weights per cluster ID, set only when a weighted route was rendered.
	Weights map[string]int32 `json:"weights,omitempty"`
}

// GatewayReport is what one member's gateway serves: the file
// status/gateways.yaml lists one per member that has a gateway. Its TCP
// port allocations are the record the next render keeps them stable by.
type GatewayReport struct {
	Member string `json:"member"`
	// Gateway is namespace/name of the Gateway the routes attach to.
	Gateway string `json:"gateway"`
	// Addresses the other members reach the gateway at.
	Addresses []string `json:"addresses"`
	HTTPPort  int32    `json:"httpPort"`
	// TCPPorts is the configured range as "from-to", empty when none.
	TCPPorts string `json:"tcpPorts,omitempty"`
	// Allocations of TCP listener ports, sorted by port.
	Allocations []PortAllocation `json:"allocations,omitempty"`
}

// PortAllocation gives one gateway listener port to one exported port.
type PortAllocation struct {
	Port      int32  `json:"port"`
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	// ServicePort is the exported Service port number; with the
	// namespace and name it identifies the allocation across renders.
	ServicePort int32 `json:"servicePort"`
	// PortName is the Service port's name, for the reader.
	PortName string `json:"portName,omitempty"`
	// Purpose is empty for an exported port, PurposeWeighted for the HTTP
	// listener a weighted GlobalTrafficPolicy of this member sends the
	// service's HTTP port through.
	Purpose string `json:"purpose,omitempty"`
}

// PurposeWeighted marks the allocation of a weighted-route listener.
const PurposeWeighted = "weighted"

// Allocations are the committed TCP port allocations by member name: the
// state Render keeps stable. Nil means none were committed.
type Allocations map[string][]PortAllocation

// Allocations are the TCP port allocations of the report's gateways, by
// member; nil when it has no gateway.
func (r *Report) Allocations() Allocations {
	if len(r.Gateways) == 0 {
		return nil
	}
	out := Allocations{}
	for _, g := range r.Gateways {
		out[g.Member] = g.Allocations
	}
	return out
}
