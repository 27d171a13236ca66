package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/review"
	"github.com/mcs-gitops/mcs-gitops/internal/review/forge"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Reviewer is review mode's part of the loop (docs/review-mode.md): the
// forge, the kinds that wait for approval, and what the forge last said
// of each proposal. Loop.Review is nil when review mode is off.
type Reviewer struct {
	Forge forge.Client
	// Kinds need approval; review.AllKinds when empty.
	Kinds []review.Kind
	// Poll is how often the forge is asked about open proposals (and the
	// branch fetched for their merges).
	Poll time.Duration
	// Base is the branch proposals go into.
	Base string

	mu sync.Mutex
	// requests are, by proposal name, the newest request the forge has
	// for its branch, as last seen.
	requests map[string]*forge.Request
	polled   time.Time
	// gen counts changes of requests: a render depends on them (URLs,
	// rejections), so an unchanged render is reused only at the same gen.
	gen int
	// approved is the approved world of commit approvedHead.
	approved     map[string]*snapshot.Snapshot
	approvedHead plumbing.Hash
	// taken are the proposals whose branch someone else pushed to: the
	// loop no longer rebuilds them (gitsync.ErrBranchTaken).
	taken map[string]bool
}

func (rv *Reviewer) isTaken(name string) bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.taken[name]
}

func (rv *Reviewer) setTaken(name string, taken bool) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.taken == nil {
		rv.taken = map[string]bool{}
	}
	if taken {
		rv.taken[name] = true
	} else {
		delete(rv.taken, name)
	}
}

// DefaultReviewPoll is how often the forge is asked about open proposals
// when spec.review.pollInterval is empty.
const DefaultReviewPoll = 30 * time.Second

// NewReviewer is review mode as cfg.Spec.Review sets it, on the forge fc.
func NewReviewer(cfg *v1alpha1.ClusterSet, fc forge.Client) (*Reviewer, error) {
	r := cfg.Spec.Review
	kinds := r.Kinds // checked when the config loaded
	poll, err := r.PollInterval.Get(DefaultReviewPoll)
	if err != nil {
		return nil, fmt.Errorf("spec.review.pollInterval: %w", err)
	}
	base := cfg.Spec.Git.Branch
	if base == "" {
		base = v1alpha1.DefaultBranch
	}
	return &Reviewer{Forge: fc, Kinds: kinds, Poll: poll, Base: base}, nil
}

func (rv *Reviewer) request(name string) *forge.Request {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.requests[name]
}

func (rv *Reviewer) setRequest(name string, r *forge.Request) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.requests == nil {
		rv.requests = map[string]*forge.Request{}
	}
	old := rv.requests[name]
	if old == nil && r == nil {
		return
	}
	if old != nil && r != nil && old.Number == r.Number && old.State == r.State && old.URL == r.URL {
		rv.requests[name] = r
		return
	}
	if r == nil {
		delete(rv.requests, name)
	} else {
		rv.requests[name] = r
	}
	rv.gen++
}

// dirty makes the next cycle render again, so that proposals a failed
// push or forge call left behind are brought up to date.
func (rv *Reviewer) dirty() {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.gen++
}

func (rv *Reviewer) generation() int {
	if rv == nil {
		return 0
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.gen
}

func (rv *Reviewer) kinds() []review.Kind {
	if len(rv.Kinds) == 0 {
		return review.AllKinds
	}
	return rv.Kinds
}

// due says whether the forge is to be asked again: never asked yet, or
// Poll has passed since.
func (rv *Reviewer) due(now time.Time) bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.polled.IsZero() || now.Sub(rv.polled) >= rv.Poll
}

// poll asks the forge about every proposal the branch's last commit lists
// and then fetches the branch: a request merged since the last poll is on
// it now. Asking first and fetching second means a merge the forge
// reported is always in what the next render is made on. It reports
// whether anything changed that the next cycle must render: a request's
// state, or the branch (a merge, a person's push).
func (l *Loop) poll(ctx context.Context) (changed bool, err error) {
	rv := l.Review
	now := l.now()
	gen := rv.generation()
	head, err := l.Repo.Head()
	if err != nil {
		return false, &RepoError{err}
	}
	c, err := l.readCommitted(head)
	if err != nil {
		return false, &RepoError{err}
	}
	for _, p := range c.Review.Proposals {
		req, err := rv.Forge.Find(ctx, layout.ProposalBranch(p.Name))
		if err != nil {
			return false, fmt.Errorf("review: proposal %s: %w", p.Name, err)
		}
		rv.setRequest(p.Name, req)
	}
	if err := l.Repo.ResetToRemote(ctx); err != nil {
		return false, &RepoError{fmt.Errorf("review: fetch %s: %w", rv.Base, err)}
	}
	moved, err := l.Repo.Head()
	if err != nil {
		return false, &RepoError{err}
	}
	rv.mu.Lock()
	rv.polled = now
	rv.mu.Unlock()
	return moved != head || rv.generation() != gen, nil
}

// reviewed is what a review-mode render adds to a tree: the proposals to
// push after the branch's commit, and the state the commit records.
type reviewed struct {
	proposals []*review.Proposal
	state     *layout.ReviewState
	// prev is what the commit rendered on recorded.
	prev *layout.ReviewState
	// rs is what the render was made from; a proposal's tree is laid out
	// from it only when the proposal is pushed (proposalTree).
	rs *resolved
	// branch is the branch's tree, which each proposal's changes are
	// listed against.
	branch map[string][]byte
}

// renderReview is render in review mode: the branch gets the live world
// with every structural change that needs approval held back, and each
// held change gets its own tree for its proposal branch.
func (l *Loop) renderReview(rs *resolved) (*tree, error) {
	prev := rs.prev
	approved, err := l.approvedAt(rs.head, prev.Inputs)
	if err != nil {
		return nil, err
	}
	live := completeSnapshots(l.Config.MemberNames(), rs.res.Snapshots)
	actual, declined, err := l.declined(rs, approved)
	if err != nil {
		return nil, err
	}
	alloc := prev.Report.Allocations()
	plan, err := review.Split(review.Input{
		Live: live, Approved: approved, ApprovedImports: actual, Declined: declined,
		Review: l.Review.kinds(), Rejected: l.rejected(prev.Review),
		Render: func(w review.World) (*render.Output, error) {
			return render.RenderWith(l.Config, w.Snapshots, render.Options{Committed: alloc, Held: w.Held})
		},
	})
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	state := l.reviewState(prev.Review, plan)
	markPending(&plan.BranchOutput.Report, plan.Proposals, state)
	t, err := l.treeOf(rs, plan.Branch.Snapshots, plan.BranchOutput, state)
	if err != nil {
		return nil, err
	}
	rv := &reviewed{proposals: plan.Proposals, state: state, prev: prev.Review, rs: rs}
	rv.branch = t.files
	t.review = rv
	return t, nil
}

// approvedAt is the approved world of commit head, parsed once per
// commit like what it says (readCommitted).
func (l *Loop) approvedAt(head plumbing.Hash, inputs map[string][]byte) (map[string]*snapshot.Snapshot, error) {
	rv := l.Review
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.approved != nil && rv.approvedHead == head {
		return rv.approved, nil
	}
	a, err := parseApproved(inputs)
	if err != nil {
		return nil, err
	}
	rv.approved, rv.approvedHead = a, head
	return a, nil
}

// parseApproved reads the branch's inputs/ back: the approved world.
func parseApproved(inputs map[string][]byte) (map[string]*snapshot.Snapshot, error) {
	out := make(map[string]*snapshot.Snapshot, len(inputs))
	for m, b := range inputs {
		s, err := snapshot.Parse(m, layout.InputFile(m), b)
		if err != nil {
			return nil, fmt.Errorf("review: the branch's %s: %w", layout.InputFile(m), err)
		}
		out[m] = s
	}
	return out, nil
}

// declined reads what the branch really imports (the import files of its
// commit, not its report) and the imports declined by hand: those the
// branch already records, and those its report lists but its files do
// not have, which a person removed from a proposal before merging it.
// A declined import is recorded with the service's exports as approved.
func (l *Loop) declined(rs *resolved, approved map[string]*snapshot.Snapshot) (map[render.ImportKey]bool, map[render.ImportKey]string, error) {
	paths, err := l.Repo.Paths(rs.head, layout.Roots)
	if err != nil {
		return nil, nil, fmt.Errorf("review: list the branch's files: %w", err)
	}
	actual := layout.ImportsIn(paths)
	out := map[render.ImportKey]string{}
	for _, o := range rs.prev.Review.Overrides {
		out[render.ImportKey{Member: o.Member, Namespace: o.Namespace, Name: o.Name}] = o.Digest
	}
	snaps := slices.Collect(maps.Values(approved))
	for k := range importsOf(rs.prev.Report) {
		if _, ok := out[k]; !ok && !actual[k] {
			out[k] = review.ServiceDigest(snaps, k.Namespace, k.Name)
			l.log().Info("review: an import was taken out of a merged proposal; holding it", "member", k.Member, "service", k.Namespace+"/"+k.Name)
		}
	}
	return actual, out, nil
}

func importsOf(r *render.Report) map[render.ImportKey]bool {
	out := map[render.ImportKey]bool{}
	for _, s := range r.Services {
		for _, m := range s.ImportedBy {
			out[render.ImportKey{Member: m, Namespace: s.Namespace, Name: s.Name}] = true
		}
	}
	return out
}

// rejected are the proposals closed unmerged: those the branch records,
// and those the forge reported closed since, at the digest they had.
func (l *Loop) rejected(st *layout.ReviewState) map[string]string {
	out := map[string]string{}
	for _, r := range st.Rejected {
		out[r.Name] = r.Digest
	}
	for _, p := range st.Proposals {
		if req := l.Review.request(p.Name); req != nil && req.State == forge.Closed {
			out[p.Name] = p.Digest
		}
	}
	return out
}

// reviewState is what the branch's commit records: the imports it holds
// back, every open proposal with its request as last seen, and the
// rejections that still stand (a change that went away or changed ends
// its rejection).
func (l *Loop) reviewState(prev *layout.ReviewState, plan *review.Plan) *layout.ReviewState {
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
		req := l.Review.request(p.Name)
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
		rec := layout.ProposalRecord{Name: p.Name, Branch: layout.ProposalBranch(p.Name), Kinds: kindNames(p.Kinds), Digest: p.Digest, Summary: p.Summary}
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

// proposalState is what a proposal's commit records: its own world's held
// imports, and the branch's other proposals and rejections, so that once
// merged the branch's record is already right.
func proposalState(branch *layout.ReviewState, p *review.Proposal) *layout.ReviewState {
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

// Pending-review conditions on held exports.
const (
	ConditionPendingReview = "PendingReview"
	ReasonProposalOpen     = "ProposalOpen"
	ReasonProposalRejected = "ProposalRejected"
)

// markPending tells each held export's owner why it waits: a
// PendingReview condition with the request's URL (or that it is being
// opened, or was rejected), and Ready=False on an export the branch does
// not carry at all yet.
func markPending(r *render.Report, proposals []*review.Proposal, st *layout.ReviewState) {
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

func kindNames(ks []review.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// propose brings every proposal branch and request in line with the
// commit the branch is now at: a new or changed proposal is built on top
// of it and pushed, its request opened or updated; a proposal whose change
// went away is closed and its branch deleted. A proposal that did not
// change and whose request is open is left where it is unless it may no
// longer merge cleanly (stale): rebuilding it on every churn commit would
// cost the forge a push per commit.
func (l *Loop) propose(ctx context.Context, base plumbing.Hash, rv *reviewed, recordChanged, due bool) (opened bool, err error) {
	r := l.Review
	prev := rv.prev
	planned := map[string]bool{}
	for _, p := range rv.proposals {
		planned[p.Name] = true
		if p.Rejected {
			continue
		}
		branch := layout.ProposalBranch(p.Name)
		req := r.request(p.Name)
		if req == nil || req.State != forge.Open {
			r.setTaken(p.Name, false)
		} else if r.isTaken(p.Name) || recordDigest(prev, p.Name) == p.Digest && !l.stale(branch, base, recordChanged, due) {
			continue
		}
		pt, err := l.proposalTree(rv, p)
		if err != nil {
			return opened, fmt.Errorf("review: proposal %s: %w", p.Name, err)
		}
		msg := proposalMessage(p)
		_, changed, err := l.Repo.CommitOn(branch, base, pt.files, layout.Roots, msg)
		if err != nil {
			return opened, fmt.Errorf("review: proposal %s: %w", p.Name, err)
		}
		if changed || req == nil || req.State != forge.Open {
			owned := l.wroteProposal(p.Name)
			if req == nil || req.State != forge.Open {
				// The branch's request is merged or closed (or there is
				// none): whatever the branch holds is done with.
				owned = func(*object.Commit) bool { return true }
			}
			err := l.Repo.PushBranch(ctx, branch, owned)
			if errors.Is(err, gitsync.ErrBranchTaken) {
				// A reviewer's edit is theirs: rebuilding over it would
				// lose it. What the merge carries is read from the branch.
				r.setTaken(p.Name, true)
				l.log().Warn("review: someone pushed to a proposal's branch; mcs-gitops no longer rebuilds it", "proposal", p.Name, "err", err)
				continue
			}
			if err != nil {
				return opened, fmt.Errorf("review: proposal %s: %w", p.Name, err)
			}
		}
		change := forge.Change{Branch: branch, Base: r.Base, Title: proposalTitle(p), Body: proposalBody(p, rv.branch, pt.files), Labels: proposalLabels(p)}
		switch {
		case req == nil || req.State != forge.Open:
			// A merged request whose change is still held means the merge
			// did not carry it (it was edited out): not proposed again
			// in the same form.
			if req != nil && req.State == forge.Merged && recordDigest(prev, p.Name) == p.Digest {
				continue
			}
			if req, err = r.Forge.Open(ctx, change); err != nil {
				return opened, fmt.Errorf("review: open proposal %s: %w", p.Name, err)
			}
			opened = true
			l.log().Info("proposal opened", "proposal", p.Name, "url", req.URL, "kinds", kindNames(p.Kinds))
		case req.Title != change.Title || req.Body != change.Body || !slices.Equal(req.Labels, change.Labels):
			if req, err = r.Forge.Update(ctx, req.Number, change); err != nil {
				return opened, fmt.Errorf("review: update proposal %s: %w", p.Name, err)
			}
			l.log().Info("proposal updated", "proposal", p.Name, "url", req.URL)
		}
		r.setRequest(p.Name, req)
	}
	for _, old := range prev.Proposals {
		if planned[old.Name] {
			continue
		}
		req := r.request(old.Name)
		if req != nil && req.State == forge.Open {
			if err := r.Forge.Close(ctx, req.Number, "The change this proposed is no longer there (the exports changed back), so mcs-gitops closed it."); err != nil {
				return opened, fmt.Errorf("review: close proposal %s: %w", old.Name, err)
			}
			l.log().Info("proposal closed", "proposal", old.Name, "url", req.URL, "why", "change gone")
		}
		if err := l.Repo.DeleteBranch(ctx, layout.ProposalBranch(old.Name)); err != nil {
			return opened, fmt.Errorf("review: proposal %s: %w", old.Name, err)
		}
		r.setRequest(old.Name, nil)
		r.setTaken(old.Name, false)
	}
	return opened, nil
}

// stale says whether an unchanged open proposal is rebuilt on base. It
// is when the branch's review record changed (the proposal changes it
// too, so it would conflict at once); otherwise, when the forge is polled
// (due), only if the branch has since changed a file the proposal also
// changes. Churn elsewhere leaves the proposal as it is: the forge merges
// changes to different files cleanly, so a quiet proposal costs no pushes.
func (l *Loop) stale(branch string, base plumbing.Hash, recordChanged, due bool) bool {
	if recordChanged {
		return true
	}
	if !due {
		return false
	}
	paths, known, err := l.Repo.Overlap(branch, base)
	switch {
	case err != nil:
		l.log().Warn("review: cannot compare a proposal with the branch; rebuilding it", "branch", branch, "err", err)
		return true
	case !known:
		return true // not built by this process yet
	case len(paths) > 0:
		l.log().Info("review: the branch changed files a proposal changes; rebuilding it on the branch", "branch", branch, "paths", paths)
		return true
	}
	return false
}

// wroteProposal recognizes the loop's own commits of proposal name (its
// author and its Proposal trailer, proposalMessage), also those of an
// earlier process whose pushes this clone does not remember.
func (l *Loop) wroteProposal(name string) func(*object.Commit) bool {
	return func(c *object.Commit) bool {
		return l.Repo.Wrote(c) && strings.Contains(c.Message, "\nProposal: "+name+"\n")
	}
}

// proposalTree lays out proposal p's render as the tree its branch
// holds, with its own review record and pending conditions.
func (l *Loop) proposalTree(rv *reviewed, p *review.Proposal) (*tree, error) {
	ps := proposalState(rv.state, p)
	markPending(&p.Output.Report, rv.proposals, ps)
	return l.treeOf(rv.rs, p.World.Snapshots, p.Output, ps)
}

func recordDigest(st *layout.ReviewState, name string) string {
	for _, p := range st.Proposals {
		if p.Name == name {
			return p.Digest
		}
	}
	return ""
}

func (l *Loop) observeReview(st *layout.ReviewState) {
	if l.Metrics == nil {
		return
	}
	open, opening := 0, 0
	for _, p := range st.Proposals {
		if p.URL == "" {
			opening++
		} else {
			open++
		}
	}
	g := l.Metrics.ReviewProposals
	g.WithLabelValues("open").Set(float64(open))
	g.WithLabelValues("opening").Set(float64(opening))
	g.WithLabelValues("rejected").Set(float64(len(st.Rejected)))
	g.WithLabelValues("overridden").Set(float64(len(st.Overrides)))
}

// never says whether the forge was never asked in this process.
func (rv *Reviewer) never() bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.polled.IsZero()
}

// pollReview polls and counts a failure: the forge being down holds up
// only review, never churn, and the cycle goes on with what it last heard.
func (l *Loop) pollReview(ctx context.Context) (changed bool) {
	changed, err := l.poll(ctx)
	if err != nil {
		l.log().Warn("review: polling the forge failed; using what it said last", "err", err)
		if l.Metrics != nil {
			l.Metrics.ReviewErrors.WithLabelValues("poll").Inc()
		}
	}
	return changed
}

// afterApply is review mode's part of a cycle once the branch's commit is
// applied: bring the proposals up to date, and every Poll ask the forge
// and fetch the branch. It says whether another cycle is needed soon: a
// request was opened (its URL goes on the branch) or the forge or the
// branch changed (a merge to apply, a rejection to record).
func (l *Loop) afterApply(ctx context.Context, pub *published) (again bool) {
	due := l.Review.due(l.now())
	if pub.review != nil {
		// Every proposal changes status/review.yaml against its base: when
		// the branch's copy changed too (a request opened, merged, closed),
		// a proposal left on the old base would conflict at once, so it is
		// rebuilt now; other overlaps wait for the poll (stale).
		opened, err := l.propose(ctx, pub.commit, pub.review, !sameState(pub.review.prev, pub.review.state), due)
		if err != nil {
			l.Review.dirty()
			l.log().Error("review: proposals not brought up to date", "err", err)
			if l.Metrics != nil {
				l.Metrics.ReviewErrors.WithLabelValues("propose").Inc()
			}
		}
		l.observeReview(pub.review.state)
		again = opened
	}
	if due && l.pollReview(ctx) {
		again = true
	}
	return again
}

func sameState(a, b *layout.ReviewState) bool {
	x, errX := layout.FormatReviewState(a)
	y, errY := layout.FormatReviewState(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}
