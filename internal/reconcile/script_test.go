// SPDX-License-Identifier: Apache-2.0

package reconcile_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/tools/txtar"
	"rsc.io/script"
	"rsc.io/script/scripttest"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/lineage"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/internal/rollout"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden sections of testdata/script/*.txt from what the scripts got")

// TestScripts runs the loop's offline half (read, resolve, render, commit,
// push; no apply) over several cycles, one scenario per file in
// testdata/script: a member going unreachable, staleAfter, a rejected push,
// and the like. Members are snapshot files the script edits between
// cycles; Git is real (a bare remote on disk); the clock is the script's.
// What needs a member's apiserver (apply, status write-back, watches) is
// tested in test/e2e.
//
// Each script's commands (besides the rsc.io/script defaults: cp,
// replace, rm, cmp, stdout, ...) are listed by scriptCommands; the
// archive holds clusterset.yaml and live/<member>.yaml, each member's
// current snapshot, and the golden files. go test -run TestScripts
// -update rewrites the golden files in place.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "script", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/script (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			runScript(t, file)
		})
	}
}

func runScript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := script.NewState(ctx, work, []string{"WORK=" + work})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ExtractFiles(ar); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, work: work, now: scriptEpoch, down: map[string]string{}, unresolved: map[string]bool{}, updated: map[string][]byte{}}
	e := script.NewEngine()
	e.Cmds = scripttest.DefaultCmds()
	for name, cmd := range h.commands() {
		e.Cmds[name] = cmd
	}
	e.Conds = scripttest.DefaultConds()
	scripttest.Run(t, e, s, file, bytes.NewReader(ar.Comment))
	if *update && len(h.updated) > 0 && !t.Failed() {
		for i, f := range ar.Files {
			if b, ok := h.updated[f.Name]; ok {
				ar.Files[i].Data = b
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scriptEpoch is the clock's reading when a script starts.
var scriptEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// harness is one script's world: the members it serves the loop, the
// bare remote and the loop, built at the first cycle.
type harness struct {
	t    *testing.T
	work string

	mu         sync.Mutex
	now        time.Time
	down       map[string]string // member -> Reason of its failed reads
	unresolved map[string]bool   // members whose gateway host does not resolve
	readErr    error             // a live file that did not load
	gates      map[string]rollout.Check
	fenced     bool // the Lease is lost: every write is refused
	// meanwhile, when set, runs once right after the next read (race).
	meanwhile func() error

	// record is the lineage record outside the process (lineage keep):
	// it outlives restarts, as the ConfigMap does; nil when not kept.
	record *memRecord
	// clones counts fresh clone directories (restart fresh).
	clones int

	cfg    *v1alpha1.ClusterSet
	loop   *reconcile.Loop
	other  *reconcile.Loop // a second process on the same remote (race)
	remote string
	// updated are golden files to write back under -update.
	updated map[string][]byte
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// Collect serves each member's live/<member>.yaml, or a failed read for a
// member the script took down.
func (h *harness) Collect(ctx context.Context, _ time.Duration) []clusters.Result {
	out := h.read()
	h.mu.Lock()
	hook := h.meanwhile
	h.meanwhile = nil
	h.mu.Unlock()
	if hook != nil {
		if err := hook(); err != nil && h.readErr == nil {
			h.readErr = fmt.Errorf("race: %w", err)
		}
	}
	return out
}

func (h *harness) read() []clusters.Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []clusters.Result
	for _, m := range h.cfg.MemberNames() {
		if reason, ok := h.down[m]; ok {
			out = append(out, clusters.Result{Member: m, Reason: reason,
				Err: fmt.Errorf("member %q: %s (taken down by the script)", m, reason)})
			continue
		}
		name := filepath.Join("live", m+".yaml")
		data, err := os.ReadFile(filepath.Join(h.work, name))
		if err != nil {
			h.readErr = fmt.Errorf("member %s: %w (write live/%s.yaml, or take the member down)", m, err, m)
			continue
		}
		snap, err := snapshot.Parse(m, name, data)
		if err != nil {
			h.readErr = err
			continue
		}
		r := clusters.Result{Member: m, Snapshot: snap}
		if h.unresolved[m] {
			snap.GatewayAddresses = nil
			r.GatewayErr = fmt.Errorf("member %q: gateway host does not resolve (the script says so)", m)
		}
		out = append(out, r)
	}
	return out
}

// start builds the loop on the first cycle, from the archive's
// clusterset.yaml, with an empty bare remote.
func (h *harness) start(ctx context.Context) error {
	if h.loop != nil {
		return nil
	}
	h.remote = filepath.Join(h.work, "remote.git")
	if _, err := git.PlainInit(h.remote, true); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testLog{h.t}, nil))
	}
	return h.launch(ctx, log)
}

// launch starts the loop process on the clone directory, with
// clusterset.yaml as the script's directory holds it now.
func (h *harness) launch(ctx context.Context, log *slog.Logger) error {
	data, err := os.ReadFile(filepath.Join(h.work, "clusterset.yaml"))
	if err != nil {
		return err
	}
	cfg, err := v1alpha1.Parse("clusterset.yaml", data)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.cfg = cfg
	h.mu.Unlock()
	clone := "clone"
	if h.clones > 0 {
		clone = fmt.Sprintf("clone-%d", h.clones)
	}
	h.loop, err = h.newLoop(ctx, clone, data, log, h.fence)
	if err == nil && h.record != nil {
		h.loop.Lineage = h.record
	}
	return err
}

// newLoop is a loop process with its own clone of the remote, reading the
// same members.
func (h *harness) newLoop(ctx context.Context, clone string, config []byte, log *slog.Logger, fence reconcile.Fence) (*reconcile.Loop, error) {
	repo, err := gitsync.Open(ctx, gitsync.Options{URL: h.remote, Branch: h.cfg.Spec.Git.Branch,
		Workdir: filepath.Join(h.work, clone), Clock: h.clock, Log: log, Fence: fence,
		Author: gitsync.Signature{Name: h.cfg.Spec.Git.Author.Name, Email: h.cfg.Spec.Git.Author.Email}})
	if err != nil {
		return nil, err
	}
	return &reconcile.Loop{Config: h.cfg, ConfigBytes: config, Source: h, Repo: repo, Log: log,
		Apply: reconcile.ApplyNone, Now: h.clock, Fence: fence, Gates: h}, nil
}

// Gate is a rollout's gates in member as the script set them (gate):
// holding unless it said otherwise.
func (h *harness) Gate(_ context.Context, member, _, _ string) rollout.Check {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.gates[member]
	c.Member = member
	return c
}

func (h *harness) fence() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fenced {
		return fmt.Errorf("%w: the script took the Lease away", reconcile.ErrFenced)
	}
	return nil
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// remoteHead is the commit the remote's branch is at; nil before the first
// push.
func (h *harness) remoteHead() (*object.Commit, error) {
	if h.cfg == nil {
		return nil, errors.New("no cycle has run yet")
	}
	r, err := git.PlainOpen(h.remote)
	if err != nil {
		return nil, err
	}
	ref, err := r.Reference(plumbing.NewBranchReferenceName(h.cfg.Spec.Git.Branch), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.CommitObject(ref.Hash())
}

// headFiles are the files matching pattern in the remote branch's last
// commit, concatenated in path order.
func (h *harness) headFiles(pattern string) ([]byte, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	c, err := h.remoteHead()
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("the remote has no commit")
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var out []byte
	found := false
	err = tree.Files().ForEach(func(f *object.File) error {
		if ok, _ := path.Match(pattern, f.Name); !ok {
			return nil
		}
		found = true
		s, err := f.Contents()
		out = append(out, s...)
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("%s at %s: no such file", pattern, c.Hash.String()[:12])
	}
	return out, err
}

// headFile is path in the remote branch's last commit.
func (h *harness) headFile(path string) ([]byte, error) {
	c, err := h.remoteHead()
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("the remote has no commit")
	}
	f, err := c.File(path)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", path, c.Hash.String()[:12], err)
	}
	s, err := f.Contents()
	return []byte(s), err
}

func (h *harness) commands() map[string]script.Cmd {
	return map[string]script.Cmd{
		"cycle": script.Command(script.CmdUsage{
			Summary: "run one cycle (sync with apply none)",
			Detail:  []string{"stdout: the commit's message, or 'no commit'; stderr: the error, which fails the command (a member that could not be read fails it too)"},
		}, h.cycle),
		"member-down": script.Command(script.CmdUsage{
			Args: "member [reason]", Summary: "reads of member fail from now on, with reason (default Unreachable)",
		}, func(_ *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) < 1 || len(args) > 2 {
				return nil, script.ErrUsage
			}
			reason := clusters.ReasonUnreachable
			if len(args) == 2 {
				if !slices.Contains(clusters.Reasons, args[1]) {
					return nil, fmt.Errorf("reason %q is not one of %v", args[1], clusters.Reasons)
				}
				reason = args[1]
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			h.down[args[0]] = reason
			return nil, nil
		}),
		"member-up": script.Command(script.CmdUsage{
			Args: "member", Summary: "reads of member succeed again",
		}, func(_ *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 1 {
				return nil, script.ErrUsage
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.down, args[0])
			return nil, nil
		}),
		"dns": script.Command(script.CmdUsage{
			Args: "member fails|works", Summary: "member's gateway host stops or starts resolving",
		}, func(_ *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 2 || args[1] != "fails" && args[1] != "works" {
				return nil, script.ErrUsage
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			h.unresolved[args[0]] = args[1] == "fails"
			return nil, nil
		}),
		"gate": script.Command(script.CmdUsage{
			Args: "member holds|waits|fails [message]", Summary: "a rollout's gates in member hold, do not hold yet, or failed (a refusal), from the next cycle on",
		}, func(_ *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) < 2 {
				return nil, script.ErrUsage
			}
			c := rollout.Check{Message: strings.Join(args[2:], " ")}
			switch args[1] {
			case "holds":
			case "waits":
				c.Gate = "ServiceImport"
			case "fails":
				c.Gate, c.Failed = "applied", true
			default:
				return nil, script.ErrUsage
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.gates == nil {
				h.gates = map[string]rollout.Check{}
			}
			h.gates[args[0]] = c
			return nil, nil
		}),
		"advance": script.Command(script.CmdUsage{
			Args: "duration", Summary: "move the clock forward (time.ParseDuration)",
		}, func(_ *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 1 {
				return nil, script.ErrUsage
			}
			d, err := time.ParseDuration(args[0])
			if err != nil || d < 0 {
				return nil, fmt.Errorf("advance: %q is not a positive duration", args[0])
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			h.now = h.now.Add(d)
			return nil, nil
		}),
		"show": script.Command(script.CmdUsage{
			Args: "pattern", Summary: "print the files matching pattern (path.Match) in the remote branch's last commit; fails when none does",
		}, func(_ *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 1 {
				return nil, script.ErrUsage
			}
			b, err := h.headFiles(args[0])
			return func(*script.State) (string, string, error) { return string(b), "", err }, nil
		}),
		"golden": script.Command(script.CmdUsage{
			Args: "path file", Summary: "compare path in the remote branch's last commit with file of the archive",
			Detail: []string{"with go test -update, file is rewritten in the archive instead"},
		}, h.golden),
		"log": script.Command(script.CmdUsage{
			Args: "[n]", Summary: "print the subjects of the remote branch's last n commits (default 1), newest first",
		}, h.log),
		"lease": script.Command(script.CmdUsage{
			Args: "lost|held", Summary: "the loop loses or regains the leader Lease: its Fence refuses every push and apply while lost",
		}, func(_ *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 1 || args[0] != "lost" && args[0] != "held" {
				return nil, script.ErrUsage
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			h.fenced = args[0] == "lost"
			return nil, nil
		}),
		"race": script.Command(script.CmdUsage{
			Args:    "src dst",
			Summary: "during the next cycle, right after it read the members: file src replaces dst (a member changes), and another loop process (its own clone, the same remote) runs a cycle and pushes",
		}, h.race),
		"remote-recreate": script.Command(script.CmdUsage{
			Summary: "the remote is deleted and created again, empty",
		}, func(*script.State, ...string) (script.WaitFunc, error) {
			if h.cfg == nil {
				return nil, errors.New("remote-recreate: run a cycle first")
			}
			if err := os.RemoveAll(h.remote); err != nil {
				return nil, err
			}
			_, err := git.PlainInit(h.remote, true)
			return nil, err
		}),
		"remote-rewind": script.Command(script.CmdUsage{
			Args: "n", Summary: "someone force-pushes the remote branch n commits back",
		}, h.rewind),
		"restart": script.Command(script.CmdUsage{
			Summary: "the loop process restarts: a new process on the same clone directory, remembering nothing, with clusterset.yaml read again",
		}, func(s *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 0 {
				return nil, script.ErrUsage
			}
			if h.loop == nil {
				return nil, errors.New("restart: run a cycle first")
			}
			// A restart reads clusterset.yaml again, as run does on a change.
			return nil, h.launch(s.Context(), h.loop.Log)
		}),
		"restart-fresh": script.Command(script.CmdUsage{
			Summary: "the loop starts again in a new, empty clone directory, as a CronJob's pod does",
		}, func(s *script.State, args ...string) (script.WaitFunc, error) {
			if len(args) != 0 {
				return nil, script.ErrUsage
			}
			if h.loop == nil {
				return nil, errors.New("restart-fresh: run a cycle first")
			}
			h.clones++
			return nil, h.launch(s.Context(), h.loop.Log)
		}),
		"lineage": script.Command(script.CmdUsage{
			Args:    "keep | show | events | accept [commit]",
			Summary: "keep: the lineage record is kept outside the process from the next (re)start; show: print it; events: the Events written on it, one a line; accept: a person accepts the branch as it is (or from commit on), as mcs-gitops lineage accept does",
		}, h.lineage),
		"other-rm": script.Command(script.CmdUsage{
			Args: "path...", Summary: "another writer deletes these paths from the branch and pushes",
		}, h.otherRemove),
		"other-push": script.Command(script.CmdUsage{
			Args: "file...", Summary: "another writer commits these files of the script's directory, at the same paths, and pushes",
		}, h.otherPush),
		"other-render": script.Command(script.CmdUsage{
			Args: "rendered-by file...", Summary: "another build of the loop commits these files as other-push does, its Rendered-By trailer saying rendered-by (none: no such trailer)",
		}, h.otherRender),
	}
}

func (h *harness) cycle(s *script.State, args ...string) (script.WaitFunc, error) {
	if len(args) != 0 {
		return nil, script.ErrUsage
	}
	if err := h.start(s.Context()); err != nil {
		return nil, err
	}
	h.readErr = nil
	out, err := h.loop.Sync(s.Context())
	if h.readErr != nil {
		return nil, h.readErr
	}
	var stdout strings.Builder
	if out != nil && out.Committed {
		c, cerr := h.remoteHead()
		if cerr != nil {
			return nil, cerr
		}
		if c == nil || c.Hash != out.Commit {
			return nil, fmt.Errorf("the cycle committed %s, but the remote is not at it", out.Commit)
		}
		stdout.WriteString(c.Message)
	} else {
		stdout.WriteString("no commit\n")
	}
	return func(*script.State) (string, string, error) {
		if err != nil {
			return stdout.String(), err.Error() + "\n", err
		}
		return stdout.String(), "", nil
	}, nil
}

func (h *harness) race(s *script.State, args ...string) (script.WaitFunc, error) {
	if len(args) != 2 {
		return nil, script.ErrUsage
	}
	if h.loop == nil {
		return nil, errors.New("race: run a cycle first")
	}
	src, dst := s.Path(args[0]), s.Path(args[1])
	h.mu.Lock()
	defer h.mu.Unlock()
	h.meanwhile = func() error {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		if h.other == nil {
			if h.other, err = h.newLoop(s.Context(), "clone-other", h.loop.ConfigBytes, h.loop.Log, nil); err != nil {
				return err
			}
		}
		out, err := h.other.Sync(s.Context())
		if err != nil {
			return fmt.Errorf("the other loop's cycle: %w", err)
		}
		if !out.Committed {
			return errors.New("the other loop's cycle committed nothing: the race needs a change")
		}
		return nil
	}
	return nil, nil
}

func (h *harness) golden(s *script.State, args ...string) (script.WaitFunc, error) {
	if len(args) != 2 {
		return nil, script.ErrUsage
	}
	got, err := h.headFile(args[0])
	if err != nil {
		return nil, err
	}
	if *update {
		h.updated[args[1]] = got
		return nil, nil
	}
	want, err := os.ReadFile(s.Path(args[1]))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(got, want) {
		return nil, fmt.Errorf("%s differs from %s (go test -run TestScripts -update rewrites it):\n--- got\n%s--- want\n%s", args[0], args[1], got, want)
	}
	return nil, nil
}

func (h *harness) log(_ *script.State, args ...string) (script.WaitFunc, error) {
	n := 1
	switch len(args) {
	case 0:
	case 1:
		var err error
		if n, err = strconv.Atoi(args[0]); err != nil || n < 1 {
			return nil, script.ErrUsage
		}
	default:
		return nil, script.ErrUsage
	}
	c, err := h.remoteHead()
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	for ; c != nil && n > 0; n-- {
		subject, _, _ := strings.Cut(c.Message, "\n")
		fmt.Fprintf(&out, "%s\n", subject)
		if c.NumParents() == 0 {
			break
		}
		if c, err = c.Parent(0); err != nil {
			return nil, err
		}
	}
	return func(*script.State) (string, string, error) { return out.String(), "", nil }, nil
}

func (h *harness) rewind(_ *script.State, args ...string) (script.WaitFunc, error) {
	if len(args) != 1 {
		return nil, script.ErrUsage
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return nil, script.ErrUsage
	}
	c, err := h.remoteHead()
	if err != nil || c == nil {
		return nil, fmt.Errorf("remote-rewind: no commit (%v)", err)
	}
	for range n {
		if c, err = c.Parent(0); err != nil {
			return nil, fmt.Errorf("remote-rewind: %w", err)
		}
	}
	r, err := git.PlainOpen(h.remote)
	if err != nil {
		return nil, err
	}
	return nil, r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(h.cfg.Spec.Git.Branch), c.Hash))
}

func (h *harness) lineage(s *script.State, args ...string) (script.WaitFunc, error) {
	if len(args) == 0 {
		return nil, script.ErrUsage
	}
	switch args[0] {
	case "keep":
		h.record = &memRecord{}
		if h.loop != nil {
			h.loop.Lineage = h.record
		}
		return nil, nil
	case "show":
		if h.record == nil {
			return nil, errors.New("lineage show: not kept")
		}
		rec, _ := h.record.Load(s.Context())
		if rec == nil {
			return func(*script.State) (string, string, error) { return "no record\n", "", nil }, nil
		}
		out := fmt.Sprintf("commit %s\nmembers %s\n", rec.Commit, strings.Join(rec.Members, ","))
		if a := rec.Accepted; a != nil {
			out += fmt.Sprintf("accepted by %s at %s, previous %s\n", a.By, a.At.Format(time.RFC3339), a.Previous)
		}
		return func(*script.State) (string, string, error) { return out, "", nil }, nil
	case "events":
		if h.record == nil {
			return nil, errors.New("lineage events: not kept")
		}
		h.record.mu.Lock()
		out := strings.Join(h.record.events, "\n") + "\n"
		h.record.mu.Unlock()
		return func(*script.State) (string, string, error) { return out, "", nil }, nil
	case "accept":
		if h.record == nil {
			return nil, errors.New("lineage accept: not kept")
		}
		commit := ""
		if len(args) > 1 {
			commit = args[1]
		}
		h.record.accept(commit, h.clock())
		return nil, nil
	}
	return nil, script.ErrUsage
}

// memRecord is the lineage record a ConfigMap keeps (lineage.ConfigMap,
// tested on a real apiserver in internal/lineage), in memory.
type memRecord struct {
	mu     sync.Mutex
	rec    *lineage.Record
	events []string // "reason: note", as lineage.ConfigMap writes them
}

func (m *memRecord) Event(_ context.Context, reason, _, note string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, reason+": "+note)
	return nil
}

func (m *memRecord) Where() string { return "the script's record" }

func (m *memRecord) Load(context.Context) (*lineage.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rec == nil {
		return nil, nil
	}
	c := *m.rec
	return &c, nil
}

func (m *memRecord) Save(_ context.Context, r *lineage.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *r
	if m.rec != nil {
		c.Accepted = m.rec.Accepted
	}
	m.rec = &c
	return nil
}

func (m *memRecord) accept(commit string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := &lineage.Record{}
	if m.rec != nil {
		prev = m.rec
	}
	m.rec = &lineage.Record{Repository: prev.Repository, Branch: prev.Branch, Path: prev.Path, Commit: commit,
		Accepted: &lineage.Acceptance{By: "a person", Reason: "the script", At: now, Previous: prev.Commit}}
}

// otherRemove is a person deleting files of the branch in a clone of
// their own.
func (h *harness) otherRemove(s *script.State, args ...string) (script.WaitFunc, error) {
	return h.otherCommit(s, "someone else's change", false, args, func(wt *git.Worktree, dir, f string) error {
		_, err := wt.Remove(filepath.ToSlash(f))
		return err
	})
}

// otherPush is a second writer (a person, another process) pushing to the
// remote from a clone of its own.
func (h *harness) otherPush(s *script.State, args ...string) (script.WaitFunc, error) {
	return h.otherCommit(s, "someone else's change", false, args, copyFile(s))
}

// otherRender is a commit of another build of the loop: the files as
// otherPush commits them, under the trailers the loop writes, with
// Rendered-By saying args[0] ("none" for a loop from before the trailer).
func (h *harness) otherRender(s *script.State, args ...string) (script.WaitFunc, error) {
	if len(args) < 2 {
		return nil, script.ErrUsage
	}
	msg := "another build's render\n\nSnapshot-Digest: sha256:0\n"
	if args[0] != "none" {
		msg += "Rendered-By: " + args[0] + "\n"
	}
	return h.otherCommit(s, msg, true, args[1:], copyFile(s))
}

// copyFile writes the script directory's file f at the same path of a
// clone, and stages it.
func copyFile(s *script.State) func(wt *git.Worktree, dir, f string) error {
	return func(wt *git.Worktree, dir, f string) error {
		data, err := os.ReadFile(s.Path(f))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			return err
		}
		_, err = wt.Add(filepath.ToSlash(f))
		return err
	}
}

// otherCommit clones the remote's branch, changes each path with edit,
// commits as someone else and pushes.
func (h *harness) otherCommit(s *script.State, message string, loop bool, paths []string, edit func(wt *git.Worktree, dir, path string) error) (script.WaitFunc, error) {
	if len(paths) == 0 {
		return nil, script.ErrUsage
	}
	if h.cfg == nil {
		return nil, errors.New("run a cycle first, so the remote has a branch")
	}
	dir, err := os.MkdirTemp(h.work, "other-")
	if err != nil {
		return nil, err
	}
	branch := plumbing.NewBranchReferenceName(h.cfg.Spec.Git.Branch)
	r, err := git.PlainCloneContext(s.Context(), dir, false, &git.CloneOptions{URL: h.remote, ReferenceName: branch, SingleBranch: true})
	if err != nil {
		return nil, err
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, err
	}
	for _, f := range paths {
		if err := edit(wt, dir, f); err != nil {
			return nil, err
		}
	}
	sig := &object.Signature{Name: "someone else", Email: "someone@example.com", When: h.clock()}
	if loop {
		// Another build of the loop commits as the loop does (gitsync's
		// default author unless the config names one).
		sig.Name, sig.Email = cmp.Or(h.cfg.Spec.Git.Author.Name, "mcs-gitops"), cmp.Or(h.cfg.Spec.Git.Author.Email, "mcs-gitops@localhost")
	}
	if _, err := wt.Commit(message, &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
		return nil, err
	}
	return nil, r.PushContext(s.Context(), &git.PushOptions{})
}
