// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/rerender"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// migration is a commit of migrate: the branch's last commit rendered
// again by this build.
type migration struct {
	commit  plumbing.Hash
	message string
	// prev is the report of the commit it re-rendered.
	prev *render.Report
}

// migrate keeps a change of renderer out of the world's commits. When the
// branch's last commit is the loop's and another build rendered it (its
// Rendered-By trailer names another version or layout, or it has none),
// migrate renders that commit's own world again, its clusterset.yaml and
// inputs/ on top of its status/, and commits what this build writes
// differently, alone, named as a migration: a reviewer then reads the
// next commit as what changed in the ClusterSet and this one as what
// changed in mcs-gitops. A render that changes no byte commits nothing.
//
// A commit someone else made is left as it is: re-rendering it would
// mix their change with the renderer's, and the cycle's own commit
// carries both, as before. A layout newer than this build writes is
// refused, nothing committed or applied: this build cannot tell what it
// would undo.
func (l *Loop) migrate(ctx context.Context, head plumbing.Hash) (*migration, error) {
	if head.IsZero() || l.checkedRenderer(head) {
		return nil, nil
	}
	by, loop, err := l.renderedBy(head)
	if err != nil || !loop || by == thisBuild {
		if err == nil {
			l.setCheckedRenderer(head)
		}
		return nil, err
	}
	var m *migration
	hash, changed, err := gitsync.Publish(ctx, l.Repo, l.Config.Spec.Sync.Timings().PushRetries,
		func(context.Context) (map[string][]byte, []string, gitsync.Message, error) {
			h, err := l.Repo.Head()
			if err != nil {
				return nil, nil, nil, err
			}
			files, err := l.Repo.Files(h, layout.Roots...)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("read commit %s: %w", h.String()[:12], err)
			}
			by, loop, err := l.renderedBy(h)
			if err != nil {
				return nil, nil, nil, err
			}
			m = nil
			if !loop || by == thisBuild {
				// A rejected push fetched a commit that needs none: commit
				// its own files, which is no commit.
				return files, layout.Roots, gitsync.StaticMessage(""), nil
			}
			next, digest, prev, err := l.rerender(h, files)
			if err != nil {
				return nil, nil, nil, err
			}
			m = &migration{prev: prev}
			return next, layout.Roots, func(c *gitsync.Changes) string {
				m.message = migrationMessage(by, c, digest)
				return m.message
			}, nil
		})
	if err != nil {
		return nil, fmt.Errorf("migrate to %s: %w", thisBuild.Describe(), err)
	}
	if !changed || m == nil {
		l.setCheckedRenderer(hash)
		return nil, nil
	}
	m.commit = hash
	l.log().Info("migrated the rendered repository", "commit", hash.String()[:12], "from", by.String(), "to", thisBuild.String())
	return m, nil
}

// renderedBy reads which build rendered commit h, and whether the loop
// made it. A layout newer than this build's is an error.
func (l *Loop) renderedBy(h plumbing.Hash) (layout.RenderedBy, bool, error) {
	msg, err := l.Repo.Message(h)
	if err != nil {
		return layout.RenderedBy{}, false, err
	}
	by, loop, err := layout.LoopCommit(msg)
	if err != nil {
		return layout.RenderedBy{}, false, fmt.Errorf("commit %s: %w", h.String()[:12], err)
	}
	if by.Layout > layout.Version {
		return by, loop, fmt.Errorf("commit %s was rendered by %s, whose layout this %s cannot write; run %s or newer (docs/versioning.md)",
			h.String()[:12], by.Describe(), thisBuild.Describe(), by.Version)
	}
	return by, loop, nil
}

// rerender renders commit h's own world (files, its tree under
// layout.Roots) with this build: its config and snapshots as they are
// (laid out as this build lays them out), the rendered files anew, the
// loop's records carried over. It returns the tree, the digest of its
// inputs and the commit's report.
func (l *Loop) rerender(h plumbing.Hash, files map[string][]byte) (map[string][]byte, string, *render.Report, error) {
	short := h.String()[:12]
	w, err := rerender.Load(files, func(p string) string { return short + ":" + p }, l.now())
	if err != nil {
		return nil, "", nil, fmt.Errorf("commit %s does not render again: %w", short, err)
	}
	next := map[string][]byte{layout.ConfigFile: files[layout.ConfigFile]}
	inputs := map[string][]byte{}
	for _, s := range w.Snapshots {
		// Before Render, which drops a stale member's exports from s.
		parts, b, err := inputParts(s, w.Committed.Inputs[s.Member])
		if err != nil {
			return nil, "", nil, fmt.Errorf("commit %s: member %q: %w", short, s.Member, err)
		}
		maps.Copy(next, parts)
		inputs[layout.InputFile(s.Member)] = b
	}
	if err := w.Render(); err != nil {
		return nil, "", nil, fmt.Errorf("commit %s does not render again: %w", short, err)
	}
	maps.Copy(next, w.Files)
	maps.Copy(next, w.Committed.Records)
	return next, layout.SnapshotDigest(inputs), w.Committed.Report, nil
}

// migrationMessage names the commit for what it is: a new layout, or the
// same layout rendered by another version.
func migrationMessage(from layout.RenderedBy, c *gitsync.Changes, digest string) string {
	var b strings.Builder
	if from.Layout != thisBuild.Layout {
		fmt.Fprintf(&b, "Migrate the rendered repository to layout %d (mcs-gitops %s)\n\n", thisBuild.Layout, thisBuild.Version)
	} else {
		fmt.Fprintf(&b, "Re-render with mcs-gitops %s (was %s); inputs unchanged\n\n", thisBuild.Version, from.Version)
	}
	b.WriteString(wrap(fmt.Sprintf("The commit before was rendered by %s. This one renders its "+
		"clusterset.yaml and inputs/ again with %s, before anything else is read: "+
		"nothing in the ClusterSet changed, and the %d file(s) written and %d removed "+
		"are how this version writes them.", from.Describe(), thisBuild.Describe(), len(c.Written), len(c.Removed)), 72))
	fmt.Fprintf(&b, "\n%s: %s\n%s: %s\n", layout.SnapshotDigestTrailer, digest, layout.RenderedByTrailer, thisBuild)
	return b.String()
}

func (l *Loop) checkedRenderer(h plumbing.Hash) bool {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	return l.rendererChecked == h
}

func (l *Loop) setCheckedRenderer(h plumbing.Hash) {
	l.cacheMu.Lock()
	defer l.cacheMu.Unlock()
	l.rendererChecked = h
}

// wrap fills text into lines of at most width characters (a word longer
// than that stands alone), each ending in a newline.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > width {
			b.WriteString("\n")
			n = 0
		}
		if n > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	b.WriteString("\n")
	return b.String()
}
