// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"sort"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// futureSkew is how far past the checking clock a creationTimestamp may
// be before it warns: a member's clock and a CI runner's are never quite
// in step, and an export created just before its snapshot was taken must
// not warn. Five minutes is far above what NTP-synced hosts drift apart
// and far below any hand-typed date.
const futureSkew = 5 * time.Minute

// warning is one of ParseStrict's warnings, with where it is sorted by.
type warning struct {
	at   position
	text string
}

func (p *parser) warnf(at position, obj, format string, args ...any) {
	text := fmt.Sprintf("%s:%d: member %s: %s: %s", at.file, at.line, p.s.Member, obj, fmt.Sprintf(format, args...))
	p.warnings = append(p.warnings, warning{at: at, text: text})
}

// sortedWarnings are the warnings in file order (files in the order read):
// each check runs over the objects in the order they were read, but some
// only once all are read.
func (p *parser) sortedWarnings() []string {
	files := map[string]int{}
	for i, f := range p.files {
		files[f] = i
	}
	sort.SliceStable(p.warnings, func(i, j int) bool {
		a, b := p.warnings[i].at, p.warnings[j].at
		if a.file != b.file {
			return files[a.file] < files[b.file]
		}
		return a.line < b.line
	})
	var out []string
	for _, w := range p.warnings {
		out = append(out, w.text)
	}
	return out
}

// warnFutureCreation warns about an object created after now. An apiserver
// stamps its own clock, so such a time was typed (or copied from a member
// whose clock is far off), and on a ServiceExport it decides precedence.
func (p *parser) warnFutureCreation(line int, kind, ref string, created metav1.Time) {
	if !created.After(p.now.Add(futureSkew)) {
		return
	}
	why := ""
	if kind == "ServiceExport" {
		why = "; the oldest export wins a conflict, so this one would lose to every export created before that date"
	}
	p.warnf(position{p.file, line}, ref, "metadata.creationTimestamp %s is in the future: the clock reads %s (%s of skew allowed)%s",
		created.UTC().Format(time.RFC3339), p.now.UTC().Format(time.RFC3339), futureSkew, why)
}

// warnSlicesWithoutService warns about EndpointSlices the renderer can
// give to no export: it finds an export's endpoints by the slice's
// kubernetes.io/service-name label, so a slice without it, or with a typo
// in it, silently contributes nothing. A Service left out as unloadable
// (Rejected) still counts: the member holds it, and its export is reported
// Invalid already.
func (p *parser) warnSlicesWithoutService() {
	services := map[string]bool{}
	for _, svc := range p.s.Services {
		services[svc.Namespace+"/"+svc.Name] = true
	}
	for _, r := range p.s.Rejected {
		if r.Kind == "Service" {
			services[r.Namespace+"/"+r.Name] = true
		}
	}
	for _, sl := range p.s.EndpointSlices {
		ref := "EndpointSlice " + sl.Namespace + "/" + sl.Name
		name, labelled := sl.Labels[discoveryv1.LabelServiceName]
		switch {
		case !labelled:
			p.warnf(p.seen[ref], ref, "has no %s label, so it belongs to no Service and no export uses its endpoints", discoveryv1.LabelServiceName)
		case !services[sl.Namespace+"/"+name]:
			p.warnf(p.seen[ref], ref, "label %s is %q, but this snapshot holds no Service %s/%s; no export uses its endpoints",
				discoveryv1.LabelServiceName, name, sl.Namespace, name)
		}
	}
}
