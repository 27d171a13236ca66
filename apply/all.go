package apply

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// ApplyAll builds and applies every target's directory of one commit's
// files, members in parallel (builds one at a time), and returns one Result
// per target in target order. A member whose build or apply fails has its
// Result.Err set; the others proceed.
func ApplyAll(ctx context.Context, targets []*Applier, files map[string][]byte, report *render.Report) []*Result {
	results := make([]*Result, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			results[i] = applyOne(ctx, t, files, report)
		})
	}
	wg.Wait()
	return results
}

func applyOne(ctx context.Context, t *Applier, files map[string][]byte, report *render.Report) (res *Result) {
	defer func() {
		// One member's bug must not take the others down with it.
		if p := recover(); p != nil {
			res = &Result{Member: t.Member, Err: fmt.Errorf("member %q: apply panicked: %v", t.Member, p)}
			t.log().Error("apply failed", "error", res.Err)
		}
	}()
	objs, err := Build(files, t.Member)
	if err != nil {
		res = &Result{Member: t.Member, Err: err}
		t.log().Error("build failed; nothing applied", "error", err)
		return res
	}
	res, _ = t.Apply(ctx, objs, report)
	return res
}
