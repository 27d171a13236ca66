// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"fmt"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// Pending is what the next sync would commit.
type Pending struct {
	Message string
	Patch   string
	Files   int
	// Changes are the files under the repository sub-path the commit
	// would write (Added: new ones) and remove.
	Changes *gitsync.Changes
	// Summary is what the commit would do per member, and the problems
	// after it, from the same diff as Message.
	Summary *layout.ChangeSummary
	// Unread lists members that could not be read; their last committed
	// snapshot stands in.
	Unread []string
}

// Empty reports whether the next sync would not commit.
func (p *Pending) Empty() bool { return p.Files == 0 }

// Diff collects and renders like Sync but writes nothing.
func (l *Loop) Diff(ctx context.Context) (*Pending, error) {
	t := l.Config.Spec.Sync.Timings()
	results := l.source().Collect(ctx, t.MemberTimeout)
	p := &Pending{}
	for _, r := range results {
		l.observeMember(r)
		if r.Err != nil {
			p.Unread = append(p.Unread, fmt.Sprintf("%s (%s)", r.Member, r.Reason))
		}
	}
	head, err := l.Repo.Head()
	if err != nil {
		return nil, &RepoError{err}
	}
	tr, err := l.produce(head, results)
	if err != nil {
		return nil, err
	}
	patch, changes, err := gitsync.DiffTree(l.Repo.Dir(), tr.files, layout.Roots)
	if err != nil {
		return nil, &RepoError{err}
	}
	p.Patch, p.Files, p.Changes = patch, len(changes.Written)+len(changes.Removed), changes
	if p.Files > 0 {
		p.Message = tr.message(changes)
	}
	p.Summary = layout.NewChangeSummaryOf(tr.prev, tr.report, &layout.Changes{Written: changes.Written, Removed: changes.Removed}, l.Config.MemberNames(), tr.events)
	return p, nil
}
