// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/lineage"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/internal/review/forge"
	"github.com/mcs-gitops/mcs-gitops/internal/review/propose"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// loopFlags are shared by the commands that talk to live clusters and to
// the repository.
type loopFlags struct {
	config     string
	repo       string
	workdir    string
	management string
	logFormat  string
	logLevel   string
	apply      string
	// readOnly commands (diff, status) neither commit nor apply: they
	// do not read the signing key or verify commits.
	readOnly bool
	// fence, set while run leads, guards every push and apply.
	fence reconcile.Fence
	// lineage is --lineage-record (sync, run).
	lineage string
}

// registerApply adds --apply, for the commands that apply after they
// commit (sync, run).
func (f *loopFlags) registerApply(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.apply, "apply", string(reconcile.ApplyAll),
		"what to do to the members after committing: all (apply and write status), status-only (Flux or Argo CD applies the directories; write only import IPs and status, export conditions and policy status), none (commit and push only); see docs/flux-argo.md")
	registerLineage(cmd, &f.lineage)
}

// defaultLineage is where the lineage record lives: beside the leader
// Lease, in the namespace deploy/ installs into.
const defaultLineage = "mcs-gitops/mcs-gitops-lineage"

func registerLineage(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "lineage-record", defaultLineage,
		`NAMESPACE/NAME of the ConfigMap in the management cluster that records the last commit pushed, so that a restart or a fresh clone refuses a branch rewritten below it (see docs/running.md); used when a management cluster is known, "" to keep it in memory only`)
}

// lineageStore is the --lineage-record ConfigMap, nil without a
// management cluster or with the flag empty.
func lineageStore(ref string, mgmt client.Client) (*lineage.ConfigMap, error) {
	if mgmt == nil || ref == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, &exitError{2, fmt.Errorf("--lineage-record must be NAMESPACE/NAME, got %q", ref)}
	}
	return &lineage.ConfigMap{Client: mgmt, Namespace: ns, Name: name}, nil
}

func (f *loopFlags) register(cmd *cobra.Command, withRepo bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "clusterset.yaml", "path of the ClusterSet config; relative kubeconfig paths in it resolve against its directory")
	if withRepo {
		fl.StringVar(&f.repo, "repo", "", "the rendered repository: a local clone used in place, or a URL/bare path to clone (default: spec.git.url)")
		fl.StringVar(&f.workdir, "workdir", "", "where a remote repository is cloned and kept between runs (default: a directory under the user cache dir)")
	}
	fl.StringVar(&f.management, "management-kubeconfig", "", "kubeconfig of the management cluster, for kubeconfig and Git credential Secrets and the leader Lease (default: in-cluster config when running in a Pod)")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
}

func (f *loopFlags) logger(cmd *cobra.Command) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, &exitError{2, fmt.Errorf("--log-level: %w", err)}
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), opts)), nil
	}
	return nil, &exitError{2, fmt.Errorf("--log-format must be text or json, got %q", f.logFormat)}
}

// env is everything a live command needs, built from the flags.
type env struct {
	cfg         *v1alpha1.ClusterSet
	configBytes []byte
	log         *slog.Logger
	mgmtConfig  *rest.Config
	mgmt        client.Client
	members     *clusters.Set
	apply       reconcile.ApplyMode
	// inventory is set with spec.inventory: joinInventory adds its
	// members to cfg and members.
	inventory *inventoryState
}

// connect loads the config and builds the member clients. Any failure
// here is a usage or input error (exit 2), a member's kubeconfig file that
// does not load included: recorded as an outage it would be committed as
// one, and waiting does not fix it. An unreachable member is not a failure
// yet, Collect finds it, and neither is a kubeconfig Secret that does not
// exist yet (member join writes it; run reloads when it appears).
func (f *loopFlags) connect(ctx context.Context, cmd *cobra.Command) (*env, error) {
	e, err := f.connectMembers(ctx, cmd)
	if err != nil {
		return nil, err
	}
	var local []error
	for _, m := range e.members.Members() {
		var le *clusters.LocalConfigError
		if errors.As(m.Err, &le) {
			local = append(local, m.Err)
		}
	}
	if len(local) > 0 {
		return nil, &exitError{2, fmt.Errorf("%s: %w", f.config, errors.Join(local...))}
	}
	for _, m := range e.members.Members() {
		if m.Err != nil {
			e.log.Warn("member has no client", "member", m.Name, "err", m.Err)
		}
	}
	return e, nil
}

// connectMembers is connect without the check and the warnings, for
// doctor: it reports a member whose client cannot be built, whatever the
// cause, as a failed check.
func (f *loopFlags) connectMembers(ctx context.Context, cmd *cobra.Command) (*env, error) {
	log, err := f.logger(cmd)
	if err != nil {
		return nil, err
	}
	// client-go logs through klog (leader election, a throttled request, a
	// watch closed), and controller-runtime's client and Flux ssa through
	// controller-runtime's logger (which otherwise prints a warning with a
	// stack trace, once, to stderr): both into the same logger, so
	// --log-format and --log-level cover them.
	klog.SetSlogLogger(log)
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler()))
	data, err := os.ReadFile(f.config)
	if err != nil {
		return nil, &exitError{2, err}
	}
	cfg, err := v1alpha1.Parse(f.config, data)
	if err != nil {
		return nil, &exitError{2, err}
	}
	e := &env{cfg: cfg, configBytes: data, log: log, apply: reconcile.ApplyAll}
	switch m := reconcile.ApplyMode(f.apply); m {
	case "", reconcile.ApplyAll:
	case reconcile.ApplyStatusOnly, reconcile.ApplyNone:
		e.apply = m
	default:
		return nil, &exitError{2, fmt.Errorf("--apply must be all, status-only or none, got %q", f.apply)}
	}
	if e.mgmtConfig, err = f.managementConfig(); err != nil {
		return nil, &exitError{2, err}
	}
	if e.mgmtConfig != nil {
		if e.mgmt, err = client.New(e.mgmtConfig, client.Options{}); err != nil {
			return nil, &exitError{2, fmt.Errorf("management cluster: %w", err)}
		}
	}
	opts := clusters.ConnectOptions{BaseDir: filepath.Dir(f.config), Log: log}
	if e.mgmt != nil {
		opts.Management = e.mgmt
	}
	if cfg.Spec.Inventory != nil {
		if e.inventory, err = f.readInventory(ctx, e); err != nil {
			return nil, &exitError{2, err}
		}
		opts.ClusterProfile = e.inventory.access(e)
	}
	e.members = clusters.Connect(ctx, cfg, opts)
	return e, nil
}

// managementConfig is the management cluster's config: the flag, else the
// in-cluster config when running in a Pod, else none.
func (f *loopFlags) managementConfig() (*rest.Config, error) {
	if f.management != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", f.management)
		if err != nil {
			return nil, fmt.Errorf("--management-kubeconfig %s: %w", f.management, err)
		}
		return cfg, nil
	}
	if cfg, err := rest.InClusterConfig(); err == nil {
		return cfg, nil
	}
	return nil, nil
}

// openRepo opens or clones the rendered repository.
func (f *loopFlags) openRepo(ctx context.Context, e *env) (*gitsync.Repo, error) {
	g := e.cfg.Spec.Git
	url := g.URL
	if f.repo != "" {
		url = f.repo
	}
	if url == "" {
		return nil, &exitError{2, fmt.Errorf("no repository: set spec.git.url in %s or pass --repo", f.config)}
	}
	workdir := f.workdir
	if workdir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		sum := sha256.Sum256([]byte(url + "\x00" + g.Branch))
		workdir = filepath.Join(base, "mcs-gitops", "repos", hex.EncodeToString(sum[:8]))
	}
	read := f.credentialReader(ctx, e)
	auth, err := gitsync.AuthFrom(g.Auth, url, read)
	if err != nil {
		return nil, &exitError{2, err}
	}
	var (
		signer   gitsync.Signer
		verifier *gitsync.Verifier
	)
	if !f.readOnly {
		if signer, err = gitsync.SignerFrom(g.Signing, read); err != nil {
			return nil, &exitError{2, err}
		}
		if verifier, err = gitsync.VerifierFrom(g.Verify, signer, read); err != nil {
			return nil, &exitError{2, err}
		}
	}
	repo, err := gitsync.Open(ctx, gitsync.Options{
		URL: url, Branch: g.Branch, Path: g.Path, Workdir: workdir, Auth: auth,
		Author: gitsync.Signature{Name: g.Author.Name, Email: g.Author.Email}, Log: e.log,
		Signer: signer, Verify: verifier, Fence: f.fence,
	})
	if err != nil {
		return nil, &exitError{3, err}
	}
	return repo, nil
}

// credentialReader resolves a Git credential reference. The value is
// returned to go-git and never logged.
func (f *loopFlags) credentialReader(ctx context.Context, e *env) func(*v1alpha1.CredentialSource) ([]byte, error) {
	return func(cs *v1alpha1.CredentialSource) ([]byte, error) {
		switch {
		case cs.Env != "":
			v, ok := os.LookupEnv(cs.Env)
			if !ok || v == "" {
				return nil, fmt.Errorf("environment variable %s is not set", cs.Env)
			}
			return []byte(v), nil
		case cs.Path != "":
			p := cs.Path
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(f.config), p)
			}
			return os.ReadFile(p)
		case cs.SecretRef != nil:
			if e.mgmt == nil {
				return nil, fmt.Errorf("Secret %s/%s needs a management cluster: pass --management-kubeconfig or run in-cluster",
					cs.SecretRef.Namespace, cs.SecretRef.Name)
			}
			return clusters.ReadSecretKey(ctx, e.mgmt, *cs.SecretRef)
		}
		return nil, fmt.Errorf("empty credential reference")
	}
}

// openLoop connects to the members and opens the repository: the start of
// every command that reads the clusters and commits or applies.
func (f *loopFlags) openLoop(cmd *cobra.Command, m *reconcile.Metrics) (*env, *reconcile.Loop, error) {
	e, err := f.connect(cmd.Context(), cmd)
	if err != nil {
		return nil, nil, err
	}
	repo, err := f.openRepo(cmd.Context(), e)
	if err != nil {
		return nil, nil, err
	}
	if err := e.joinCommittedInventory(cmd.Context(), repo); err != nil {
		return nil, nil, err
	}
	loop := e.loop(repo, m)
	if err := f.keepLineage(e, loop); err != nil {
		return nil, nil, err
	}
	return e, loop, nil
}

// keepLineage gives loop its --lineage-record store, when there is one.
func (f *loopFlags) keepLineage(e *env, loop *reconcile.Loop) error {
	store, err := lineageStore(f.lineage, e.mgmt)
	if err != nil || store == nil {
		return err
	}
	loop.Lineage = store
	return nil
}

// withReview turns review mode on for a loop that commits (sync, run)
// when the config asks for it: the forge client with its credentials.
func (f *loopFlags) withReview(ctx context.Context, e *env, loop *reconcile.Loop) error {
	if !e.cfg.Spec.Review.Enabled {
		return nil
	}
	fc, err := forge.New(e.cfg, f.credentialReader(ctx, e))
	if err != nil {
		return &exitError{2, fmt.Errorf("spec.review.forge: %w", err)}
	}
	rv, err := propose.New(e.cfg, fc)
	if err != nil {
		return &exitError{2, err}
	}
	loop.Review = rv
	return nil
}

// eventsFlush bounds how long a command waits, before it exits, for the
// Kubernetes Events its last cycle emitted to be written.
const eventsFlush = 5 * time.Second

// loop builds the reconcile loop over an open repository, with Events on;
// whoever runs it calls CloseEvents.
func (e *env) loop(repo *gitsync.Repo, m *reconcile.Metrics) *reconcile.Loop {
	m.WatchVerification(repo)
	loop := &reconcile.Loop{Config: e.cfg, ConfigBytes: e.configBytes, Members: e.members, Repo: repo, Log: e.log, Metrics: m, Apply: e.apply, Events: true}
	if st := e.inventory; st != nil && st.record != nil {
		loop.Inventory = st.file
		if m != nil {
			m.InventoryMembers.Set(float64(len(st.record.Members)))
			held := 0.0
			if st.held {
				held = 1
			}
			m.InventoryHeld.Set(held)
		}
	}
	return loop
}
