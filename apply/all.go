// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// ApplyAll builds and applies every target's directory of one commit's
// files, members in parallel (builds one at a time), and returns one Result
// per target in target order. A member whose build or apply fails has its
// Result.Err set; the others proceed. ServiceExport status is written last,
// once every member has applied, so that an export's Ready condition can
// say which other member refused one of its objects.
func ApplyAll(ctx context.Context, targets []*Applier, files map[string][]byte, report *render.Report) []*Result {
	results := make([]*Result, len(targets))
	states := make([]*applied, len(targets))
	each := func(fn func(i int, t *Applier)) {
		var wg sync.WaitGroup
		for i, t := range targets {
			wg.Go(func() {
				// One member's bug must not take the others down with it.
				defer func() {
					if p := recover(); p != nil {
						results[i] = &Result{Member: t.Member, Err: fmt.Errorf("member %q: apply panicked: %v", t.Member, p)}
						states[i] = nil
						t.log().Error("apply failed", "error", results[i].Err)
					}
				}()
				fn(i, t)
			})
		}
		wg.Wait()
	}
	var inputs map[string][]byte
	for _, t := range targets {
		if t.Inputs == nil && inputs == nil {
			inputs = layout.JoinInputs(files)
		}
	}
	each(func(i int, t *Applier) {
		t.inputs, t.inputParts = t.Inputs, files
		if t.inputs == nil {
			t.inputs = inputs[t.Member]
		}
		start := time.Now()
		objs, err := t.Builds.Build(files, t.Member)
		took := time.Since(start)
		if errors.Is(err, ErrNoMemberDir) {
			if t.AllowEmpty {
				objs, err = nil, nil
			} else {
				err = t.explainEmpty(ctx, err)
			}
		}
		if err != nil {
			results[i] = &Result{Member: t.Member, Err: err}
			t.log().Error("build failed; nothing applied", "error", err)
			return
		}
		results[i], states[i] = t.applyObjects(ctx, objs, report)
		results[i].Took.Build = took
	})
	withProblems := WithMemberProblems(report, results)
	each(func(i int, t *Applier) {
		if states[i] != nil {
			results[i], _ = t.finish(ctx, results[i], states[i], withProblems)
		}
	})
	return results
}

// explainEmpty adds to a refused commit without the member's directory
// what applying it would have deleted, so the user can judge --allow-empty.
func (a *Applier) explainEmpty(ctx context.Context, err error) error {
	ids, lerr := a.WouldDelete(ctx)
	switch {
	case lerr != nil:
		return fmt.Errorf("%w (could not list what it would delete: %v)", err, lerr)
	case len(ids) == 0:
		return fmt.Errorf("%w (it would delete nothing: mcs-gitops has applied nothing there)", err)
	}
	const shown = 20
	more := ""
	if len(ids) > shown {
		more = fmt.Sprintf(" and %d more", len(ids)-shown)
		ids = ids[:shown]
	}
	return fmt.Errorf("%w; it would delete %s%s", err, strings.Join(ids, ", "), more)
}
