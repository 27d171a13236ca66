// SPDX-License-Identifier: Apache-2.0

package propose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/review"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Pending-review conditions on held exports.
const (
	ConditionPendingReview = "PendingReview"
	ReasonProposalOpen     = "ProposalOpen"
	ReasonProposalRejected = "ProposalRejected"
)

// MarkPending tells each held export's owner why it waits: a
// PendingReview condition with the request's URL (or that it is being
// opened, or was rejected), and Ready=False on an export the branch does
// not carry at all yet.
func MarkPending(r *render.Report, proposals []*review.Proposal, st *layout.ReviewState) {
	urls := map[string]string{}
	for _, p := range st.Proposals {
		urls[p.Name] = p.URL
	}
	for _, p := range st.Rejected {
		urls[p.Name] = p.URL
	}
	for _, p := range proposals {
		if _, listed := urls[p.Name]; !listed {
			continue // this proposal's own tree: nothing of it waits there
		}
		c := render.Condition{Type: ConditionPendingReview, Status: "True", Reason: ReasonProposalOpen}
		switch {
		case p.Rejected:
			c.Reason = ReasonProposalRejected
			c.Message = fmt.Sprintf("%s was closed without merging (%s); it is not proposed again until the export changes", p.Name, orUnknown(urls[p.Name]))
		case urls[p.Name] == "":
			c.Message = fmt.Sprintf("waiting for approval: proposal %s is being opened on branch %s", p.Name, layout.ProposalBranch(p.Name))
		default:
			c.Message = fmt.Sprintf("waiting for approval in %s", urls[p.Name])
		}
		for _, e := range p.Exports {
			setPending(r, e, c)
		}
	}
}

func setPending(r *render.Report, e review.ExportRef, c render.Condition) {
	i := slices.IndexFunc(r.Services, func(s render.ServiceReport) bool { return s.Namespace == e.Namespace && s.Name == e.Name })
	if i < 0 {
		r.Services = append(r.Services, render.ServiceReport{Namespace: e.Namespace, Name: e.Name})
		slices.SortFunc(r.Services, func(a, b render.ServiceReport) int {
			if a.Namespace != b.Namespace {
				return strings.Compare(a.Namespace, b.Namespace)
			}
			return strings.Compare(a.Name, b.Name)
		})
		i = slices.IndexFunc(r.Services, func(s render.ServiceReport) bool { return s.Namespace == e.Namespace && s.Name == e.Name })
	}
	s := &r.Services[i]
	j := slices.IndexFunc(s.Exports, func(x render.ExportReport) bool { return x.Member == e.Member })
	if j < 0 {
		s.Exports = append(s.Exports, render.ExportReport{Member: e.Member})
		j = len(s.Exports) - 1
	}
	ex := &s.Exports[j]
	if e.New {
		ex.Conditions = []render.Condition{{Type: "Ready", Status: "False", Reason: ConditionPendingReview, Message: c.Message}}
	}
	ex.Conditions = append(slices.DeleteFunc(ex.Conditions, func(x render.Condition) bool { return x.Type == c.Type }), c)
}

func orUnknown(s string) string {
	if s == "" {
		return "the request is gone"
	}
	return s
}
