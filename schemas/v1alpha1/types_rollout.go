// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// RolloutPolicy stages structural changes of a service across the members
// in waves, each its own commit, the next one committed when the last
// one's gates have held for its soak time. Unset (no waves): every change
// reaches every member at once, as KEP-1645 implementations do.
type RolloutPolicy struct {
	// Waves in order. A member belongs to the first wave that selects it;
	// members no wave selects make a last wave of their own.
	Waves []RolloutWave `json:"waves,omitempty"`
	// Stage lists the kinds of change that roll out in waves: Import (a
	// member starts importing the service), Ports, Type, Families (of the
	// merged import) and Exporter (a new member's endpoints join). Unset:
	// all of them. Endpoint churn and readiness, a member losing the
	// service, an exporter leaving, conflicts and traffic policies are
	// never staged.
	Stage []RolloutKind `json:"stage,omitempty"`
	// Unreachable is what a wave does with a member that cannot be read:
	// Block (default: the rollout waits, and says so) or Skip (the wave
	// goes on without it, and says so).
	Unreachable RolloutUnreachable `json:"unreachable,omitempty" schema:"enum=Block|Skip;default=Block"`
	// DNS, when set, adds a gate: in each member of the wave, the
	// service's ClusterSet name resolves through the member's DNS to its
	// ServiceImport's IPs (any answer, for a headless import), as
	// `doctor --dns-probe` asks it. The loop must reach each member's DNS.
	DNS *RolloutDNSGate `json:"dns,omitempty"`
}

// RolloutDNSGate is where the DNS gate asks each member's DNS.
type RolloutDNSGate struct {
	// Servers are, by member name, the host:port to query; a member not
	// listed is queried at its kube-dns Service IP, port 53, which
	// answers only from inside the member's network.
	Servers map[string]string `json:"servers,omitempty"`
	// Zone is the ClusterSet zone; default clusterset.local.
	Zone string `json:"zone,omitempty"`
}

// RolloutWave is one wave of a rollout.
type RolloutWave struct {
	// Name of the wave, in commit messages and status.
	Name string `json:"name" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Members of the wave.
	Members MemberSelector `json:"members"`
	// Soak is how long the wave's gates must hold before the next wave is
	// committed; default 0: as soon as they hold.
	Soak Duration `json:"soak,omitempty" schema:"pattern=^(0|([0-9]+(ns|us|ms|s|m|h))+)$"`
}

// RolloutKind is a kind of change a rollout may stage.
type RolloutKind string

// The kinds of change a rollout may stage.
const (
	RolloutImport   RolloutKind = "Import"
	RolloutPorts    RolloutKind = "Ports"
	RolloutType     RolloutKind = "Type"
	RolloutFamilies RolloutKind = "Families"
	RolloutExporter RolloutKind = "Exporter"
)

// RolloutKinds are every kind, in order.
var RolloutKinds = []RolloutKind{RolloutImport, RolloutPorts, RolloutType, RolloutFamilies, RolloutExporter}

// RolloutUnreachable is what a wave does with an unreachable member.
type RolloutUnreachable string

// What a wave does with an unreachable member.
const (
	RolloutBlock RolloutUnreachable = "Block"
	RolloutSkip  RolloutUnreachable = "Skip"
)
