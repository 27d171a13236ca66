package layout

import (
	"bytes"
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/render"
)

const reviewHeader = "# Written by mcs-gitops in review mode: the imports held back until their proposal\n" +
	"# is merged (render --check reads them), the open proposals and the rejected ones.\n"

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
