// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// validate checks spec.reach (p) against the members: every name a
// selector gives must be a member's, every label a valid one, each
// namespace and service listed once.
func (r ReachPolicy) validate(p string, known func(string) bool) ErrorList {
	var errs ErrorList
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	switch r.Unlisted {
	case "", ReachShared, ReachNone:
	default:
		add(p+".unlisted", "must be %s or %s, got %q", ReachShared, ReachNone, r.Unlisted)
	}
	selector := func(field string, s MemberSelector) {
		errs = append(errs, selectorProblems(field, s, known)...)
	}
	seen := map[string]int{}
	for i, ns := range r.Namespaces {
		np := fmt.Sprintf("%s.namespaces[%d]", p, i)
		switch {
		case ns.Name == "":
			add(np+".name", "required")
		case len(validation.IsDNS1123Label(ns.Name)) > 0:
			add(np+".name", "%q is not a namespace name: %s", ns.Name, strings.Join(validation.IsDNS1123Label(ns.Name), "; "))
		default:
			if j, dup := seen[ns.Name]; dup {
				add(np+".name", "namespace %q is already listed at %s.namespaces[%d]", ns.Name, p, j)
			}
			seen[ns.Name] = i
		}
		if ns.Members != nil {
			selector(np+".members", *ns.Members)
		}
		services := map[string]int{}
		for j, s := range ns.Services {
			sp := fmt.Sprintf("%s.services[%d]", np, j)
			switch {
			case s.Name == "":
				add(sp+".name", "required")
			case len(validation.IsDNS1035Label(s.Name)) > 0:
				add(sp+".name", "%q is not a service name: %s", s.Name, strings.Join(validation.IsDNS1035Label(s.Name), "; "))
			default:
				if k, dup := services[s.Name]; dup {
					add(sp+".name", "service %q is already listed at %s.services[%d]", s.Name, np, k)
				}
				services[s.Name] = j
			}
			selector(sp+".importers", s.Importers)
		}
	}
	return errs
}

// labelsProblems checks a map of Kubernetes labels (field names it).
func labelsProblems(field string, labels map[string]string) ErrorList {
	var errs ErrorList
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf("label key %q: %s", k, strings.Join(msgs, "; "))})
		}
		if msgs := validation.IsValidLabelValue(labels[k]); len(msgs) > 0 {
			errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf("label %s value %q: %s", k, labels[k], strings.Join(msgs, "; "))})
		}
	}
	return errs
}

// selectorProblems checks a member selector (field names it): every name a
// member's, every label valid.
func selectorProblems(field string, s MemberSelector, known func(string) bool) ErrorList {
	var errs ErrorList
	for i, n := range s.Names {
		if !known(n) {
			errs = append(errs, &FieldError{Field: fmt.Sprintf("%s.names[%d]", field, i), Msg: fmt.Sprintf("%q is not a member of the ClusterSet", n)})
		}
	}
	return append(errs, labelsProblems(field+".matchLabels", s.MatchLabels)...)
}
