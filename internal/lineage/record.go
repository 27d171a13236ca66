// SPDX-License-Identifier: Apache-2.0

package lineage

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Record is what the loop last pushed to one branch of one repository.
type Record struct {
	// Repository, Branch and Path name the rendered tree the record is
	// about; a record of another one says nothing about this one (the
	// repository moved: a person changed the config).
	Repository, Branch, Path string
	// Commit is the last commit pushed (hex); "" before any, or after a
	// person accepted the branch as it is.
	Commit string
	// Members are those whose snapshot Commit holds under inputs/: a
	// branch that lacks one cannot stand in for it.
	Members []string
	// Accepted is the last time a person accepted a branch the loop
	// refused; nil if never.
	Accepted *Acceptance
}

// Acceptance is a person's word that the branch is to be taken as it is.
type Acceptance struct {
	By, Reason string
	At         time.Time
	// Previous is the commit the record held before (hex, "" if none).
	Previous string
}

// Same reports whether r is about the tree named.
func (r *Record) Same(repository, branch, path string) bool {
	return r.Repository == repository && r.Branch == branch && r.Path == path
}

// Keys of the ConfigMap's data and annotations. Data is what the loop
// writes each push; annotations are the last acceptance, which the loop
// keeps as it is.
const (
	keyRepository = "repository"
	keyBranch     = "branch"
	keyPath       = "path"
	keyCommit     = "commit"
	keyMembers    = "members"

	annotationPrefix   = "mcs-gitops.io/accepted-"
	annotationBy       = annotationPrefix + "by"
	annotationReason   = annotationPrefix + "reason"
	annotationAt       = annotationPrefix + "at"
	annotationPrevious = annotationPrefix + "previous-commit"
)

// encode writes r into cm's data and annotations.
func encode(r *Record, cm *corev1.ConfigMap) {
	cm.Data = map[string]string{
		keyRepository: r.Repository,
		keyBranch:     r.Branch,
		keyPath:       r.Path,
		keyCommit:     r.Commit,
		keyMembers:    strings.Join(r.Members, "\n"),
	}
	if a := r.Accepted; a != nil {
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[annotationBy] = a.By
		cm.Annotations[annotationReason] = a.Reason
		cm.Annotations[annotationAt] = a.At.UTC().Format(time.RFC3339)
		cm.Annotations[annotationPrevious] = a.Previous
	}
}

// decode reads a record from cm; an error names what does not parse.
func decode(cm *corev1.ConfigMap) (*Record, error) {
	d := cm.Data
	r := &Record{Repository: d[keyRepository], Branch: d[keyBranch], Path: d[keyPath], Commit: d[keyCommit]}
	if r.Commit != "" && !isHash(r.Commit) {
		return nil, fmt.Errorf("ConfigMap %s/%s: %s %q is not a commit hash", cm.Namespace, cm.Name, keyCommit, r.Commit)
	}
	for _, m := range strings.Split(d[keyMembers], "\n") {
		if m = strings.TrimSpace(m); m != "" {
			r.Members = append(r.Members, m)
		}
	}
	slices.Sort(r.Members)
	if by, ok := cm.Annotations[annotationBy]; ok {
		a := &Acceptance{By: by, Reason: cm.Annotations[annotationReason], Previous: cm.Annotations[annotationPrevious]}
		if at := cm.Annotations[annotationAt]; at != "" {
			t, err := time.Parse(time.RFC3339, at)
			if err != nil {
				return nil, fmt.Errorf("ConfigMap %s/%s: annotation %s: %w", cm.Namespace, cm.Name, annotationAt, err)
			}
			a.At = t
		}
		r.Accepted = a
	}
	return r, nil
}

func isHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
