// SPDX-License-Identifier: Apache-2.0

package propose

import (
	"bytes"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/review"
	"github.com/mcs-gitops/mcs-gitops/internal/review/forge"
)

// Rejected are the proposals closed unmerged: those the branch records,
// and those the forge reported closed since, at the digest they had.
func (rv *Reviewer) Rejected(st *layout.ReviewState) map[string]string {
	out := map[string]string{}
	for _, r := range st.Rejected {
		out[r.Name] = r.Digest
	}
	for _, p := range st.Proposals {
		if req := rv.Request(p.Name); req != nil && req.State == forge.Closed {
			out[p.Name] = p.Digest
		}
	}
	return out
}

// State is what the branch's commit records: the imports it holds
// back, every open proposal with its request as last seen, and the
// rejections that still stand (a change that went away or changed ends
// its rejection).
func (rv *Reviewer) State(prev *layout.ReviewState, plan *review.Plan) *layout.ReviewState {
	st := &layout.ReviewState{}
	for k := range plan.Branch.Held {
		st.HeldImports = append(st.HeldImports, layout.HeldImport{Member: k.Member, Namespace: k.Namespace, Name: k.Name})
	}
	for k, d := range plan.Declined {
		st.Overrides = append(st.Overrides, layout.OverrideRecord{Member: k.Member, Namespace: k.Namespace, Name: k.Name, Digest: d})
	}
	rejectedURL := map[string]layout.RejectedRecord{}
	for _, r := range prev.Rejected {
		rejectedURL[r.Name] = r
	}
	for _, p := range plan.Proposals {
		req := rv.Request(p.Name)
		if p.Rejected {
			r := layout.RejectedRecord{Name: p.Name, Digest: p.Digest}
			if old, ok := rejectedURL[p.Name]; ok && old.Digest == p.Digest {
				r.URL, r.Number = old.URL, old.Number
			} else if req != nil {
				r.URL, r.Number = req.URL, req.Number
			}
			st.Rejected = append(st.Rejected, r)
			continue
		}
		rec := layout.ProposalRecord{Name: p.Name, Branch: layout.ProposalBranch(p.Name), Kinds: KindNames(p.Kinds), Digest: p.Digest, Summary: p.Summary}
		switch {
		case req != nil && req.State == forge.Open:
			rec.URL, rec.Number = req.URL, req.Number
		case req == nil:
			// Not asked yet in this process (a CronJob's sync): the
			// branch's record stands.
			for _, old := range prev.Proposals {
				if old.Name == p.Name {
					rec.URL, rec.Number = old.URL, old.Number
				}
			}
		}
		st.Proposals = append(st.Proposals, rec)
	}
	return st
}

// ProposalState is what a proposal's commit records: its own world's held
// imports, and the branch's other proposals and rejections, so that once
// merged the branch's record is already right.
func ProposalState(branch *layout.ReviewState, p *review.Proposal) *layout.ReviewState {
	st := &layout.ReviewState{Rejected: branch.Rejected, Overrides: branch.Overrides}
	for k := range p.World.Held {
		st.HeldImports = append(st.HeldImports, layout.HeldImport{Member: k.Member, Namespace: k.Namespace, Name: k.Name})
	}
	for _, r := range branch.Proposals {
		if r.Name != p.Name {
			st.Proposals = append(st.Proposals, r)
		}
	}
	return st
}

// RecordDigest is the digest st records for proposal name; "" when none.
func RecordDigest(st *layout.ReviewState, name string) string {
	for _, p := range st.Proposals {
		if p.Name == name {
			return p.Digest
		}
	}
	return ""
}

// SameState says whether two review records are the same bytes.
func SameState(a, b *layout.ReviewState) bool {
	x, errX := layout.FormatReviewState(a)
	y, errY := layout.FormatReviewState(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// KindNames are the kinds' names, in order.
func KindNames(ks []review.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}
