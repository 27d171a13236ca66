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
		return r.reuseClone(ctx, dir)
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
		return r.attach(repo, dir)
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

// reuseClone picks up a clone left in Workdir by an earlier run.
func (r *Repo) reuseClone(ctx context.Context, dir string) error {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return fmt.Errorf("opening the clone in %s: %w", dir, err)
	}
	rem, err := repo.Remote(remoteName)
	if err != nil {
		return fmt.Errorf("the clone in %s has no remote %s: %w", dir, remoteName, err)
	}
	if urls := rem.Config().URLs; len(urls) == 0 || urls[0] != r.opts.URL {
		return fmt.Errorf("workdir %s holds a clone of another repository; remove it or choose another workdir", dir)
	}
	if err := r.attach(repo, dir); err != nil {
		return err
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, r.branch)); err != nil {
		return err
	}
	r.opts.Log.Info("git clone reused", "workdir", dir, "branch", r.opts.Branch)
	return r.ResetToRemote(ctx)
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
