// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// Refusal is a rendered object the member did not take: its apiserver (an
// admission policy, a quota, a terminating namespace) refused it, or a
// user's object already holds its name. The other objects are applied,
// pruned and have their status written regardless.
type Refusal struct {
	// Object is "Kind/namespace/name".
	Object string
	// Service is the "namespace/name" of the exported service the object
	// belongs to; empty for an object of no single service.
	Service string
	// Message is the apiserver's answer, or why a collision was skipped.
	Message string
}

func (r Refusal) String() string { return r.Object + ": " + r.Message }

// serviceOf is the exported service a rendered object belongs to.
func serviceOf(u *unstructured.Unstructured) string {
	if keyOf(u).GroupKind == serviceImportGK {
		return u.GetNamespace() + "/" + u.GetName()
	}
	if s := u.GetLabels()[mcsv1alpha1.LabelServiceName]; s != "" {
		return u.GetNamespace() + "/" + s
	}
	return ""
}

// applyEach applies objects one at a time, in parallel, after a staged
// apply failed: ssa dry-runs a whole stage and stops at the first error, so
// one refused object would otherwise keep every other import, prune and
// status write of the member from happening. Namespaces never get here
// (createNamespaces). It returns the keys of the objects that were refused.
// An object whose apply ran out of time was not refused by the member:
// those make the error, and are not listed (a deadline used to show as
// every object "refused by the member").
func (a *Applier) applyEach(ctx context.Context, rm *ssa.ResourceManager, ordered []desiredObject, opts ssa.ApplyOptions, res *Result) (map[objKey]bool, error) {
	entries := make([]*ssa.ChangeSetEntry, len(ordered))
	errs := make([]error, len(ordered))
	forEach(ctx, len(ordered), func(ctx context.Context, i int) error {
		entries[i], errs[i] = rm.Apply(ctx, ordered[i].obj, opts)
		return nil
	})
	refused := map[objKey]bool{}
	var applied []ssa.ChangeSetEntry
	timedOut := 0
	for i, d := range ordered {
		if errs[i] != nil && outOfTime(ctx, errs[i]) {
			timedOut++
			continue
		}
		if errs[i] != nil {
			refused[d.key] = true
			res.Refused = append(res.Refused, Refusal{Object: describe(d.obj), Service: serviceOf(d.obj), Message: errs[i].Error()})
			continue
		}
		if entries[i] != nil {
			applied = append(applied, *entries[i])
		}
	}
	res.record(applied)
	if timedOut > 0 {
		return refused, fmt.Errorf("applying %d of %d object(s) did not finish in time: %w", timedOut, len(ordered), context.DeadlineExceeded)
	}
	return refused, nil
}

// WithMemberProblems returns a copy of report in which every valid export
// of a service that some member refused (or where a user's object holds a
// rendered name) is Ready=False, its message naming each member, object
// and apiserver answer: the exporter learns that its service does not
// reach everyone. Without problems the report itself is returned.
func WithMemberProblems(report *render.Report, results []*Result) *render.Report {
	if report == nil {
		return nil
	}
	byService := map[string][]string{}
	for _, r := range results {
		if r == nil {
			continue
		}
		for _, p := range r.Refused {
			if p.Service != "" {
				byService[p.Service] = append(byService[p.Service], fmt.Sprintf("member %s did not take %s: %s", r.Member, p.Object, p.Message))
			}
		}
	}
	if len(byService) == 0 {
		return report
	}
	out := *report
	out.Services = make([]render.ServiceReport, len(report.Services))
	for i, s := range report.Services {
		out.Services[i] = s
		problems := byService[s.Namespace+"/"+s.Name]
		if len(problems) == 0 {
			continue
		}
		sort.Strings(problems)
		exports := make([]render.ExportReport, len(s.Exports))
		for j, e := range s.Exports {
			exports[j] = e
			exports[j].Conditions = append([]render.Condition(nil), e.Conditions...)
			for k, c := range exports[j].Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					exports[j].Conditions[k] = render.Condition{Type: "Ready", Status: "False", Reason: string(mcsv1alpha1.ServiceExportReasonFailed),
						Message: c.Message + ", but " + strings.Join(problems, "; ")}
				}
			}
		}
		out.Services[i].Exports = exports
	}
	return &out
}
