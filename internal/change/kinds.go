// SPDX-License-Identifier: Apache-2.0

package change

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is a kind of change a CI job can fail on (--fail-on), beside the
// problem kinds of the world after it.
type Kind string

const (
	// Withdrawal: a member stops importing a service (it can no longer
	// reach it).
	Withdrawal Kind = "withdrawal"
	// NewReachability: a member starts importing a service.
	NewReachability Kind = "new-reachability"
	// NewConflict: an export's Conflict condition appears.
	NewConflict Kind = "new-conflict"
	// PolicyChange: a consumer's traffic policy changes where its traffic
	// goes.
	PolicyChange Kind = "policy"
	// MemberChange: a member joins or leaves the ClusterSet, goes stale
	// (its exports dropped) or comes back from it.
	MemberChange Kind = "member"
)

// Kinds are every Kind, in the order Findings lists them.
var Kinds = []Kind{Withdrawal, NewReachability, NewConflict, PolicyChange, MemberChange}

// Finding is one change of a kind, said in one line.
type Finding struct {
	Kind    Kind   `json:"kind"`
	Service string `json:"service,omitempty"`
	Member  string `json:"member,omitempty"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	if f.Service == "" {
		return f.Message
	}
	return f.Service + ": " + f.Message
}

// Findings lists the set's changes by kind, in Kinds order, then by
// service.
func (s Set) Findings() []Finding {
	var out []Finding
	for _, k := range Kinds {
		if k == MemberChange {
			for _, m := range s.Members {
				// Going unreachable, or back, with the exports kept moves
				// no reach: not a finding.
				if m.MovesExports() {
					out = append(out, Finding{Kind: k, Member: m.Name, Message: "member " + m.String()})
				}
			}
			continue
		}
		for _, svc := range s.Services {
			out = append(out, svc.findings(k)...)
		}
	}
	return out
}

func (s Service) findings(k Kind) []Finding {
	key := s.Key()
	switch k {
	case Withdrawal:
		if len(s.Lost) > 0 {
			return []Finding{{Kind: k, Service: key, Message: "no longer imported by " + strings.Join(s.Lost, ", ")}}
		}
	case NewReachability:
		if len(s.Gained) > 0 {
			return []Finding{{Kind: k, Service: key, Message: "now imported by " + strings.Join(s.Gained, ", ")}}
		}
	case NewConflict:
		var out []Finding
		for _, c := range s.Conflicts {
			if c.Old == "" && c.New != "" {
				out = append(out, Finding{Kind: k, Service: key, Member: c.Member, Message: fmt.Sprintf("%s's export: %s", c.Member, c.New)})
			}
		}
		return out
	case PolicyChange:
		var out []Finding
		for _, p := range s.Policies {
			var how string
			switch {
			case p.Old == nil:
				how = "added (" + p.New.Mode + ")"
			case p.New == nil:
				how = "removed (was " + p.Old.Mode + ")"
			case p.Old.Mode != p.New.Mode:
				how = p.Old.Mode + " -> " + p.New.Mode
			case !slices.Equal(p.Old.Clusters, p.New.Clusters):
				how = fmt.Sprintf("(%s) %s -> %s", p.New.Mode, strings.Join(p.Old.Clusters, ", "), strings.Join(p.New.Clusters, ", "))
			default:
				how = fmt.Sprintf("(%s) weights changed", p.New.Mode)
			}
			out = append(out, Finding{Kind: k, Service: key, Member: p.Member, Message: fmt.Sprintf("traffic policy of %s: %s", p.Member, how)})
		}
		return out
	}
	return nil
}
