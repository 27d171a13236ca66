package reconcile

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// tree is one rendered repository state, ready to commit.
type tree struct {
	files  map[string][]byte
	report *render.Report
	prev   *render.Report
	events []string
	digest string
}

// committed is what the last commit says about the world: the snapshots to
// fall back on for members that cannot be read now, their health, and the
// report to describe the next change against, whose gateways carry the
// port allocations to keep.
type committed struct {
	inputs map[string][]byte
	health map[string]clusters.Health
	report *render.Report
}

// readCommitted loads the fallback state from commit head. An empty
// repository has none.
func (l *Loop) readCommitted(head plumbing.Hash) (*committed, error) {
	c := &committed{inputs: map[string][]byte{}, health: map[string]clusters.Health{}, report: &render.Report{}}
	if head.IsZero() {
		return c, nil
	}
	files, err := l.Repo.Files(head, InputsDir, render.StatusDir)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", head.String()[:12], err)
	}
	for p, b := range files {
		switch {
		case strings.HasPrefix(p, InputsDir+"/"):
			c.inputs[p] = b
		case p == HealthFile:
			if c.health, err = clusters.ParseHealthFile(b); err != nil {
				return nil, fmt.Errorf("commit %s: %s: %w", head.String()[:12], HealthFile, err)
			}
		}
	}
	if c.report, err = render.ReadReport(files); err != nil {
		return nil, fmt.Errorf("commit %s: %w", head.String()[:12], err)
	}
	return c, nil
}

// produce renders the tree for the collected results on top of commit
// head: live members from what was just read, the others from their last
// committed snapshot.
func (l *Loop) produce(head plumbing.Hash, results []clusters.Result) (*tree, error) {
	prev, err := l.readCommitted(head)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{ConfigFile: l.ConfigBytes}
	// The committed inputs are what render --check re-renders offline, so
	// the live snapshot goes through the same Format and Parse: the commit
	// is then reproducible from its own inputs/ byte for byte.
	live := make([]clusters.Result, len(results))
	lastKnown := map[string]*snapshot.Snapshot{}
	for i, r := range results {
		live[i] = r
		file := path.Join(InputsDir, snapshot.FileName(r.Member))
		if r.Err == nil && r.Snapshot != nil {
			if r.GatewayErr != nil {
				l.keepGatewayAddresses(r, prev.inputs[file])
			}
			b, err := snapshot.Format(r.Snapshot)
			if err != nil {
				return nil, fmt.Errorf("member %q: format snapshot: %w", r.Member, err)
			}
			s, err := snapshot.Parse(r.Member, file, b)
			if err != nil {
				return nil, fmt.Errorf("member %q: live snapshot does not load back: %w", r.Member, err)
			}
			live[i].Snapshot = s
			files[file] = b
			continue
		}
		if b, ok := prev.inputs[file]; ok {
			s, err := snapshot.Parse(r.Member, file+" (last commit)", b)
			if err != nil {
				return nil, err
			}
			lastKnown[r.Member] = s
			files[file] = b
		}
	}
	t := l.Config.Spec.Sync.Timings()
	snaps, health := clusters.ResolveSnapshots(live, lastKnown, prev.health, l.now(), t.StaleAfter)
	snaps = completeSnapshots(l.memberNames(), snaps)
	out, err := render.Render(l.Config, snaps, prev.report.Allocations())
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	rendered, err := render.Files(out)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	for p, b := range rendered {
		files[p] = b
	}
	hb, err := clusters.HealthFile(health)
	if err != nil {
		return nil, err
	}
	files[HealthFile] = hb
	inputs := map[string][]byte{}
	for p, b := range files {
		if strings.HasPrefix(p, InputsDir+"/") {
			inputs[p] = b
		}
	}
	return &tree{
		files: files, report: &out.Report, prev: prev.report,
		events: healthEvents(prev.health, health), digest: gitsync.SnapshotDigest(inputs),
	}, nil
}

// keepGatewayAddresses gives a member whose gateway host did not resolve
// the addresses of its last committed snapshot: a DNS hiccup must not cut
// every consumer off from its gateway. Without a committed address the
// render reports the gateway as unresolved.
func (l *Loop) keepGatewayAddresses(r clusters.Result, committed []byte) {
	var kept []string
	if committed != nil {
		if s, err := snapshot.Parse(r.Member, "last commit", committed); err == nil {
			kept = s.GatewayAddresses
		}
	}
	l.Log.Warn("gateway host did not resolve; keeping the last committed addresses",
		"member", r.Member, "error", r.GatewayErr.Error(), "kept", strings.Join(kept, ","))
	r.Snapshot.GatewayAddresses = kept
}

func (l *Loop) memberNames() []string {
	names := make([]string, len(l.Config.Spec.Members))
	for i, m := range l.Config.Spec.Members {
		names[i] = m.Name
	}
	return names
}

// completeSnapshots gives every member a snapshot: one that was never read
// and has nothing committed counts as empty (no namespaces, no exports),
// which the report shows, rather than failing the whole render.
func completeSnapshots(names []string, snaps []*snapshot.Snapshot) []*snapshot.Snapshot {
	have := map[string]bool{}
	for _, s := range snaps {
		have[s.Member] = true
	}
	for _, n := range names {
		if !have[n] {
			snaps = append(snaps, &snapshot.Snapshot{Member: n})
		}
	}
	return snaps
}

// healthEvents says in one line each what changed about reachability, for
// the commit message.
func healthEvents(prev map[string]clusters.Health, next []clusters.Health) []string {
	var out []string
	for _, h := range next {
		p, seen := prev[h.Member]
		switch {
		case !h.Reachable && h.ExportsDropped && !p.ExportsDropped:
			out = append(out, fmt.Sprintf("%s unreachable since %s (%s) for longer than staleAfter; its exports are dropped",
				h.Member, sinceString(h), h.Reason))
		case !h.Reachable && (!seen || p.Reachable):
			out = append(out, fmt.Sprintf("%s unreachable (%s); keeping its last known exports", h.Member, h.Reason))
		case h.Reachable && seen && !p.Reachable:
			out = append(out, fmt.Sprintf("%s reachable again", h.Member))
		}
	}
	return out
}

func sinceString(h clusters.Health) string {
	if h.UnreachableSince == nil {
		return "unknown"
	}
	return h.UnreachableSince.UTC().Format("2006-01-02T15:04:05Z")
}
