// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// Open makes the repository of o ready to commit to.
//
// A URL naming a local non-bare repository is used in place: commits go
// to Branch (checked out, or created from HEAD), and Push/ResetToRemote
// act on its "origin" remote if it has one. Anything else (a bare
// repository path, file://, https://, ssh://, user@host:path) is cloned
// into Workdir; a clone already there is reused after a fetch and hard
// reset to origin/Branch. An empty remote, or one without Branch yet,
// works: the first commit creates Branch.
func Open(ctx context.Context, o Options) (*Repo, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	r := &Repo{opts: o, branch: plumbing.NewBranchReferenceName(o.Branch), redact: redact.New(authSecrets(o.Auth)...).ForURL(o.URL)}
	if local, ok := localWorktree(o.URL); ok {
		return r, r.openInPlace(local)
	}
	if o.Workdir == "" {
		return nil, fmt.Errorf("git repository %s must be cloned but no workdir is set", r.redact.String(o.URL))
	}
	if err := r.openClone(ctx); err != nil {
		return nil, r.redact.Error(err)
	}
	return r, nil
}

// localWorktree returns the absolute worktree root when url is a local
// path to a non-bare repository's root. file:// URLs, bare repositories
// and remote URLs are cloned instead.
func localWorktree(url string) (string, bool) {
	if strings.Contains(url, "://") {
		return "", false
	}
	if ep, err := transport.NewEndpoint(url); err != nil || ep.Protocol != "file" {
		return "", false // user@host:path
	}
	if _, err := os.Stat(filepath.Join(url, ".git")); err != nil {
		return "", false
	}
	abs, err := filepath.Abs(url)
	if err != nil {
		return "", false
	}
	return abs, true
}

func (r *Repo) openInPlace(dir string) error {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return fmt.Errorf("opening git repository %s: %w", dir, err)
	}
	if err := r.attach(repo, dir); err != nil {
		return err
	}
	if err := r.checkoutBranch(); err != nil {
		return fmt.Errorf("git repository %s: %w", dir, err)
	}
	r.opts.Log.Debug("git repository opened in place", "dir", dir, "branch", r.opts.Branch, "remote", r.remote)
	return nil
}

// checkoutBranch puts HEAD on Branch in a repository used in place.
func (r *Repo) checkoutBranch() error {
	head, err := r.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return fmt.Errorf("reading HEAD: %w", err)
	}
	if head.Type() == plumbing.SymbolicReference && head.Target() == r.branch {
		return nil
	}
	if _, err := r.repo.Head(); errors.Is(err, plumbing.ErrReferenceNotFound) {
		// No commit yet: the first commit creates Branch.
		return r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, r.branch))
	}
	_, err = r.repo.Reference(r.branch, false)
	create := errors.Is(err, plumbing.ErrReferenceNotFound)
	if err != nil && !create {
		return err
	}
	if err := r.wt.Checkout(&git.CheckoutOptions{Branch: r.branch, Create: create, Keep: true}); err != nil {
		return fmt.Errorf("checking out branch %s: %w", r.opts.Branch, err)
	}
	return nil
}

func (r *Repo) openClone(ctx context.Context) error {
	dir, err := filepath.Abs(r.opts.Workdir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		err := r.reuseClone(ctx, dir)
		var torn *tornCloneError
		if !errors.As(err, &torn) {
			return err
		}
		aside, merr := r.moveAside(dir)
		if merr != nil {
			return fmt.Errorf("%w (and moving it aside: %v)", err, merr)
		}
		// The remote holds everything that was pushed; what the torn
		// clone held beyond it was never published.
		r.opts.Log.Warn("the clone in the work directory could not be read; moved aside, cloning again",
			"workdir", dir, "movedTo", aside, "err", r.redact.String(torn.Error()))
	}
	repo, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{
		URL:           r.opts.URL,
		Auth:          r.opts.Auth,
		RemoteName:    remoteName,
		ReferenceName: r.branch,
		SingleBranch:  true,
		Tags:          git.NoTags,
	})
	switch {
	case err == nil:
		r.opts.Log.Info("git repository cloned", "url", r.redact.String(r.opts.URL), "branch", r.opts.Branch, "workdir", dir)
		if err := r.attach(repo, dir); err != nil {
			return err
		}
		r.line, err = r.Head()
		return err
	case errors.Is(err, transport.ErrEmptyRemoteRepository), errors.Is(err, plumbing.ErrReferenceNotFound),
		errors.As(err, new(git.NoMatchingRefSpecError)):
		// Nothing to clone on Branch yet: start it.
		r.opts.Log.Info("git remote has no branch yet; the first commit creates it", "url", r.redact.String(r.opts.URL), "branch", r.opts.Branch)
		return r.initEmpty(dir)
	default:
		return fmt.Errorf("cloning %s (branch %s) into %s: %w", r.redact.String(r.opts.URL), r.opts.Branch, dir, err)
	}
}

// initEmpty starts a repository whose remote has nothing on Branch.
func (r *Repo) initEmpty(dir string) error {
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		return fmt.Errorf("initializing %s: %w", dir, err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: remoteName, URLs: []string{r.opts.URL}}); err != nil {
		return fmt.Errorf("adding remote to %s: %w", dir, err)
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, r.branch)); err != nil {
		return err
	}
	return r.attach(repo, dir)
}

// reuseClone picks up a clone left in Workdir by an earlier run. A clone
// whose own files do not read (a *tornCloneError) is for openClone to
// replace; a clone of another repository is an error to report.
func (r *Repo) reuseClone(ctx context.Context, dir string) error {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return &tornCloneError{fmt.Errorf("opening the clone in %s: %w", dir, err)}
	}
	cfg, err := repo.Config()
	if err != nil {
		return &tornCloneError{fmt.Errorf("reading the clone's configuration in %s: %w", dir, err)}
	}
	rem, ok := cfg.Remotes[remoteName]
	if !ok {
		return fmt.Errorf("the clone in %s has no remote %s", dir, remoteName)
	}
	if urls := rem.URLs; len(urls) == 0 || urls[0] != r.opts.URL {
		return fmt.Errorf("workdir %s holds a clone of another repository; remove it or choose another workdir", dir)
	}
	if err := r.checkRefs(repo); err != nil {
		return &tornCloneError{fmt.Errorf("the clone in %s: %w", dir, err)}
	}
	if err := r.attach(repo, dir); err != nil {
		return &tornCloneError{err}
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, r.branch)); err != nil {
		return err
	}
	r.opts.Log.Info("git clone reused", "workdir", dir, "branch", r.opts.Branch)
	return r.ResetToRemote(ctx)
}

// checkRefs reads every reference of a clone and the commits its branch
// and the remote's point at: a process killed while go-git rewrote one in
// place leaves it empty, and then nothing else works.
func (r *Repo) checkRefs(repo *git.Repository) error {
	refs, err := repo.Storer.IterReferences()
	if err != nil {
		return err
	}
	defer refs.Close()
	if err := refs.ForEach(func(*plumbing.Reference) error { return nil }); err != nil {
		return err
	}
	for _, name := range []plumbing.ReferenceName{r.branch, r.trackingRef()} {
		ref, err := repo.Storer.Reference(name)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := repo.CommitObject(ref.Hash()); err != nil {
			return fmt.Errorf("%s points at %s: %w", name, ref.Hash(), err)
		}
	}
	return nil
}

// tornCloneError is a clone in the work directory that cannot be read.
type tornCloneError struct{ err error }

func (e *tornCloneError) Error() string { return e.err.Error() }
func (e *tornCloneError) Unwrap() error { return e.err }

// moveAside renames a torn clone to <dir>.torn-<time>, for a person to
// look at, and deletes any clone moved aside before: one is kept, not one
// per restart.
func (r *Repo) moveAside(dir string) (string, error) {
	old, err := filepath.Glob(dir + ".torn-*")
	if err != nil {
		return "", err
	}
	for _, o := range old {
		if err := os.RemoveAll(o); err != nil {
			return "", err
		}
	}
	aside := dir + ".torn-" + r.opts.Clock().UTC().Format("20060102T150405Z")
	return aside, os.Rename(dir, aside)
}

func (r *Repo) attach(repo *git.Repository, dir string) error {
	wt, err := repo.Worktree()
	if err != nil {
		return fmt.Errorf("git repository %s: %w", dir, err)
	}
	r.repo, r.wt, r.root = repo, wt, dir
	_, err = repo.Remote(remoteName)
	r.remote = err == nil
	return nil
}
