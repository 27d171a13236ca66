// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/render"
)

const reviewHeader = "# Written by mcs-gitops in review mode: the imports held back until their proposal\n" +
	"# is merged (render --check reads them), the open proposals and the rejected ones.\n"

// ProposalPrefix is where proposal branches live: a proposal named
// service/demo/web is pushed to mcs-gitops/proposals/service/demo/web.
const ProposalPrefix = "mcs-gitops/proposals/"

// ProposalBranch is the branch proposal name is pushed to.
func ProposalBranch(name string) string { return ProposalPrefix + name }

// ReviewState is status/review.yaml: what review mode needs to carry from one
// commit to the next. The held imports make the commit reproducible from
// its own files; the rejections are how a change closed unmerged is not
// proposed again until it changes.
type ReviewState struct {
	HeldImports []HeldImport     `json:"heldImports,omitempty"`
	Proposals   []ProposalRecord `json:"proposals,omitempty"`
	Rejected    []RejectedRecord `json:"rejected,omitempty"`
	// Overrides are imports a person took out of a proposal before
	// merging it: held, and not proposed again while the service's
	// exports stay as they were (Digest).
	Overrides []OverrideRecord `json:"overrides,omitempty"`
}

// OverrideRecord is one import declined by hand.
type OverrideRecord struct {
	Member    string `json:"member"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Digest    string `json:"digest"`
}

// HeldImport is one import held back.
type HeldImport struct {
	Member    string `json:"member"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ProposalRecord is one open proposal.
type ProposalRecord struct {
	Name   string   `json:"name"`
	Branch string   `json:"branch"`
	Kinds  []string `json:"kinds"`
	Digest string   `json:"digest"`
	// URL and Number are the pull request's, once it is open.
	URL     string   `json:"url,omitempty"`
	Number  int      `json:"number,omitempty"`
	Summary []string `json:"summary,omitempty"`
}

// RejectedRecord is a proposal closed without merging: the change with
// this digest is not proposed again.
type RejectedRecord struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	URL    string `json:"url,omitempty"`
	Number int    `json:"number,omitempty"`
}

// Held is the set render.Options.Held takes.
func (r *ReviewState) Held() map[render.ImportKey]bool {
	out := map[render.ImportKey]bool{}
	if r == nil {
		return out
	}
	for _, h := range r.HeldImports {
		out[render.ImportKey{Member: h.Member, Namespace: h.Namespace, Name: h.Name}] = true
	}
	return out
}

// FormatReviewState writes status/review.yaml, every list sorted: same state,
// same bytes.
func FormatReviewState(r *ReviewState) ([]byte, error) {
	c := *r
	c.HeldImports = append([]HeldImport(nil), r.HeldImports...)
	sort.Slice(c.HeldImports, func(i, j int) bool {
		a, b := c.HeldImports[i], c.HeldImports[j]
		return a.Member+"/"+a.Namespace+"/"+a.Name < b.Member+"/"+b.Namespace+"/"+b.Name
	})
	c.Proposals = append([]ProposalRecord(nil), r.Proposals...)
	sort.Slice(c.Proposals, func(i, j int) bool { return c.Proposals[i].Name < c.Proposals[j].Name })
	c.Rejected = append([]RejectedRecord(nil), r.Rejected...)
	sort.Slice(c.Rejected, func(i, j int) bool { return c.Rejected[i].Name < c.Rejected[j].Name })
	c.Overrides = append([]OverrideRecord(nil), r.Overrides...)
	sort.Slice(c.Overrides, func(i, j int) bool {
		a, b := c.Overrides[i], c.Overrides[j]
		return a.Member+"/"+a.Namespace+"/"+a.Name < b.Member+"/"+b.Namespace+"/"+b.Name
	})
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ReviewFile, err)
	}
	return append([]byte(reviewHeader), b...), nil
}

// ParseReviewState reads status/review.yaml back; empty data (no file: review
// mode was never on) gives an empty record.
func ParseReviewState(data []byte) (*ReviewState, error) {
	r := &ReviewState{}
	if len(bytes.TrimSpace(data)) == 0 {
		return r, nil
	}
	if err := yaml.UnmarshalStrict(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", ReviewFile, err)
	}
	seen := map[string]bool{}
	for i, p := range r.Proposals {
		if p.Name == "" || p.Branch == "" {
			return nil, fmt.Errorf("%s: proposals[%d]: name and branch are required", ReviewFile, i)
		}
		// The loop pushes to, deletes, and opens and closes requests for
		// the branch a record names; a record edited to name any other
		// branch must not make it do that there.
		if err := checkProposalName(p.Name); err != nil {
			return nil, fmt.Errorf("%s: proposals[%d]: %w", ReviewFile, i, err)
		}
		if p.Branch != ProposalBranch(p.Name) {
			return nil, fmt.Errorf("%s: proposals[%d]: branch %q is not proposal %q's branch %q", ReviewFile, i, p.Branch, p.Name, ProposalBranch(p.Name))
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s: proposal %q appears twice", ReviewFile, p.Name)
		}
		seen[p.Name] = true
	}
	for i, h := range r.HeldImports {
		if h.Member == "" || h.Namespace == "" || h.Name == "" {
			return nil, fmt.Errorf("%s: heldImports[%d]: member, namespace and name are required", ReviewFile, i)
		}
	}
	return r, nil
}

// proposalSegments is how many parts each kind of proposal name has:
// service/<ns>/<name>, import/<member>/<ns>, policy/<member>/<ns>/<name>,
// member/<member> (review.Plan makes them).
var proposalSegments = map[string]int{"service": 3, "import": 3, "policy": 4, "member": 2}

// checkProposalName accepts only the names review mode makes. Every part
// after the kind is a member, namespace or service name, so a DNS-1123
// label: that also keeps out "..", ".lock" and whatever else a Git ref
// name may not hold.
func checkProposalName(name string) error {
	parts := strings.Split(name, "/")
	want, ok := proposalSegments[parts[0]]
	if !ok {
		return fmt.Errorf("proposal name %q: not service/, import/, policy/ or member/", name)
	}
	if len(parts) != want {
		return fmt.Errorf("proposal name %q: a %s proposal's name has %d parts", name, parts[0], want)
	}
	for _, p := range parts[1:] {
		if msgs := validation.IsDNS1123Label(p); len(msgs) > 0 {
			return fmt.Errorf("proposal name %q: %q: %s", name, p, strings.Join(msgs, "; "))
		}
	}
	return nil
}
