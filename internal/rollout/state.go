// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// State is every rollout in progress, as status/rollouts.yaml records
// it: what the next commit renders the waves from. Sorted by service.
type State struct {
	Rollouts []*Rollout `json:"rollouts"`
}

// Rollout is one service's change rolling out in waves.
type Rollout struct {
	// Service is "namespace/name".
	Service string `json:"service"`
	// Kinds are the kinds of change staged (Staged), when it started.
	Kinds []v1alpha1.RolloutKind `json:"kinds"`
	// Waves are the plan, fixed when the rollout started: a change of
	// spec.rollout applies to the next rollout, not to this one.
	Waves []WaveState `json:"waves"`
	// Reached is how many waves are committed (1 to len(Waves)).
	Reached int `json:"reached"`
	// Started is when the first wave was committed; WaveAt when the
	// last one was, or the target last changed (its soak starts again).
	Started time.Time `json:"started"`
	WaveAt  time.Time `json:"waveAt"`
	// Target is the digest of the exports being rolled out (Digest); a
	// newer change to them supersedes it (see Supersede).
	Target string `json:"target"`
	// Paused says which gate failed in which member; the rollout waits
	// for a person (Request).
	Paused *Pause `json:"paused,omitempty"`
	// Aborted: every member is back to Before until the exports change.
	Aborted bool `json:"aborted,omitempty"`
	// Request is what a person asks of the rollout by a commit (or
	// `mcs-gitops rollout resume|abort`): Resume or Abort. The loop acts
	// on it and clears it.
	Request Request `json:"request,omitempty"`
	// Skipped are members that could not be read during their wave and
	// that the policy (unreachable: Skip) let the wave go on without.
	Skipped []string `json:"skipped,omitempty"`
	// Importers are the members that imported the service before.
	Importers []string `json:"importers,omitempty"`
	// Before are the service's exports as they were before the change,
	// by member: what the members not reached yet still import.
	Before []Export `json:"before,omitempty"`
}

// WaveState is one wave of a rollout's plan.
type WaveState struct {
	Name    string   `json:"name"`
	Members []string `json:"members,omitempty"`
	Soak    string   `json:"soak,omitempty"`
}

// Pause is a failed gate.
type Pause struct {
	Wave    int       `json:"wave"`
	Member  string    `json:"member"`
	Gate    string    `json:"gate"`
	Message string    `json:"message"`
	Since   time.Time `json:"since"`
}

func (p *Pause) String() string {
	return fmt.Sprintf("paused at wave %d: member %s: %s: %s", p.Wave, p.Member, p.Gate, p.Message)
}

// Request is a person's ask of a rollout.
type Request string

// The requests a person may make of a rollout.
const (
	Resume Request = "Resume"
	Abort  Request = "Abort"
)

// Export is one member's export of a service: its ServiceExport and
// Service as the member's snapshot has them; endpoints are churn and
// are never kept.
type Export struct {
	Member        string                     `json:"member"`
	ServiceExport *mcsv1alpha1.ServiceExport `json:"serviceExport"`
	Service       *corev1.Service            `json:"service,omitempty"`
}

// Find is the rollout of service ("namespace/name"), or nil.
func (s *State) Find(service string) *Rollout {
	for _, r := range s.Rollouts {
		if r.Service == service {
			return r
		}
	}
	return nil
}

// Parse reads status/rollouts.yaml; no file is no rollout.
func Parse(data []byte) (*State, error) {
	s := &State{}
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		return nil, err
	}
	for i, r := range s.Rollouts {
		if r == nil || !strings.Contains(r.Service, "/") || r.Reached < 1 || r.Reached > len(r.Waves) {
			return nil, fmt.Errorf("rollouts[%d]: needs a service namespace/name and reached between 1 and its number of waves", i)
		}
		switch r.Request {
		case "", Resume, Abort:
		default:
			return nil, fmt.Errorf("rollouts[%d] (%s): request %q: must be %s or %s", i, r.Service, r.Request, Resume, Abort)
		}
	}
	return s, nil
}

// Format writes s as status/rollouts.yaml, byte for byte the same for
// the same state; nil when there is no rollout (no file).
func Format(s *State) ([]byte, error) {
	if s == nil || len(s.Rollouts) == 0 {
		return nil, nil
	}
	// Sorted in a copy: the state given may be shared (a commit's, read
	// by several renders).
	sorted := State{Rollouts: slices.SortedFunc(slices.Values(s.Rollouts), func(a, b *Rollout) int { return strings.Compare(a.Service, b.Service) })}
	b, err := yaml.Marshal(sorted)
	if err != nil {
		return nil, err
	}
	return append([]byte("# Staged rollouts in progress (spec.rollout, docs/reach-and-rollout.md).\n# To resume or abort one, set its request: Resume or Abort and commit,\n# or run mcs-gitops rollout resume|abort NAMESPACE/NAME.\n"), b...), nil
}

// ExportsOf are the exports of ns/name in snaps, by member order:
// ServiceExport and Service, without what changes on its own
// (resourceVersion, status, managed fields are already gone from a
// snapshot).
func ExportsOf(snaps []*snapshot.Snapshot, ns, name string) []Export {
	var out []Export
	for _, s := range snaps {
		if s == nil {
			continue
		}
		e := Export{Member: s.Member}
		for i := range s.ServiceExports {
			if se := &s.ServiceExports[i]; se.Namespace == ns && se.Name == name && se.DeletionTimestamp == nil {
				e.ServiceExport = se.DeepCopy()
			}
		}
		if e.ServiceExport == nil {
			continue
		}
		for i := range s.Services {
			if svc := &s.Services[i]; svc.Namespace == ns && svc.Name == name {
				e.Service = svc.DeepCopy()
			}
		}
		out = append(out, e)
	}
	return out
}

// Digest says whether two sets of exports are the same change.
func Digest(exports []Export) string {
	b, err := json.Marshal(exports)
	if err != nil {
		panic(err) // API types always marshal
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
