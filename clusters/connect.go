// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// UserAgent is sent to every member's apiserver.
const UserAgent = "mcs-gitops"

// Member is one member cluster's connection. Config and Client are nil when
// Err is set: the client could not even be built (kubeconfig file missing,
// Secret missing, no context of that name, ...). Err never contains a
// credential.
type Member struct {
	Name   string
	Config *rest.Config
	Client client.Client
	Err    error

	// GatewayHost is the member's gateway.host from the config, empty when
	// it has no gateway. A DNS name is resolved on every read into
	// Snapshot.GatewayAddresses; an IP address is left to the config.
	GatewayHost string
	// LookupHost resolves GatewayHost; nil means net.DefaultResolver.LookupHost.
	// It is given the member's read context and must honour it.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Log receives what reading and watching the member reports; nil means
	// slog.Default().
	Log *slog.Logger

	// Clients that honour the context on every call and need no discovery,
	// so a hung apiserver cannot hold Collect or Watch past their deadline.
	typed    kubernetes.Interface
	dynamic  dynamic.Interface
	metadata metadata.Interface

	// qps and burst limit requests to the member (qps < 0: no limit; 0:
	// the defaults), from spec.sync by Connect.
	qps   float32
	burst int

	// parsed is what the last read parsed, so the next parses only what
	// changed.
	parsed parseMemo
	// reuse is the last read's snapshot and whether a watch vouches for
	// it still.
	reuse readReuse
}

// LocalConfigError is a member client that cannot be built because of
// this machine's configuration: its kubeconfig file is missing, unreadable
// or unparsable, lacks the context, or refers to files that do not load.
// Waiting does not fix it, so callers treat it as bad input rather than a
// member outage; a kubeconfig Secret that does not exist yet is not one
// (member join writes it later).
type LocalConfigError struct{ Err error }

func (e *LocalConfigError) Error() string { return e.Err.Error() }
func (e *LocalConfigError) Unwrap() error { return e.Err }

// Set is every member of a ClusterSet, in config order.
type Set struct {
	members []*Member
	byName  map[string]*Member
}

// ConnectOptions say where member credentials are read from.
type ConnectOptions struct {
	// Management reads kubeconfig Secrets (kubeconfig.secretRef); nil when
	// there is no management cluster.
	Management client.Reader
	// BaseDir is what relative kubeconfig paths resolve against (usually the
	// directory of clusterset.yaml).
	BaseDir string
	// InClusterConfig builds the in-cluster config; defaults to
	// rest.InClusterConfig.
	InClusterConfig func() (*rest.Config, error)
	// LookupHost resolves members' gateway hosts (Member.LookupHost); nil
	// means net.DefaultResolver.LookupHost.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Log receives every member's read and watch messages; nil means
	// slog.Default().
	Log *slog.Logger
	// ClusterProfile builds the config of a member whose credentials come
	// through a ClusterProfile (kubeconfig.clusterProfile, every inventory
	// member); nil when there is no inventory. A *NotHealthyError is
	// reported as such.
	ClusterProfile func(ctx context.Context, ref v1alpha1.ClusterProfileRef) (*rest.Config, error)
}

// Connect builds one client per member. It does not contact the members:
// building a client only reads kubeconfigs and Secrets, so a down member
// costs nothing here and is found by Collect or Watch. A member whose
// client cannot be built gets Err set; the others are unaffected.
func Connect(ctx context.Context, cs *v1alpha1.ClusterSet, opts ConnectOptions) *Set {
	s := &Set{byName: map[string]*Member{}}
	for _, m := range cs.Spec.Members {
		mem := &Member{Name: m.Name, LookupHost: opts.LookupHost, Log: opts.Log}
		mem.qps, mem.burst = cs.Spec.Sync.RateLimit()
		if m.Gateway != nil {
			mem.GatewayHost = m.Gateway.Host
		}
		cfg, err := memberConfig(ctx, m, opts)
		if err == nil {
			err = mem.build(cfg)
			// A kubeconfig file's client fails to build only on what the
			// file says (a CA or key file that does not load).
			if err != nil && m.Kubeconfig.Path != "" {
				err = &LocalConfigError{err}
			}
		}
		if err != nil {
			mem.Err = redact.Error(fmt.Errorf("member %q: %w", m.Name, err))
			mem.Config, mem.Client = nil, nil
		}
		s.members = append(s.members, mem)
		s.byName[m.Name] = mem
	}
	return s
}

// log is the member's logger, every line naming the member.
func (m *Member) log() *slog.Logger {
	l := m.Log
	if l == nil {
		l = slog.Default()
	}
	return l.With("member", m.Name)
}

// Members returns the members in config order.
func (s *Set) Members() []*Member { return s.members }

// Member returns the member called name, nil when there is none.
func (s *Set) Member(name string) *Member { return s.byName[name] }

// NewSet wraps already built members, in the given order. Tests and callers
// with their own configs use it; members with a Config and no Err get the
// internal clients Collect and Watch need.
func NewSet(members ...*Member) (*Set, error) {
	s := &Set{byName: map[string]*Member{}}
	for _, m := range members {
		if _, dup := s.byName[m.Name]; dup {
			return nil, fmt.Errorf("member %q appears twice", m.Name)
		}
		if m.Err == nil {
			if m.Config == nil {
				return nil, fmt.Errorf("member %q: neither Config nor Err set", m.Name)
			}
			c := m.Client
			if err := m.build(m.Config); err != nil {
				return nil, fmt.Errorf("member %q: %w", m.Name, err)
			}
			if c != nil {
				m.Client = c
			}
		}
		s.members = append(s.members, m)
		s.byName[m.Name] = m
	}
	return s, nil
}

func memberConfig(ctx context.Context, m v1alpha1.Member, opts ConnectOptions) (*rest.Config, error) {
	k := m.Kubeconfig
	switch {
	case k.Path != "":
		p := k.Path
		if !filepath.IsAbs(p) && opts.BaseDir != "" {
			p = filepath.Join(opts.BaseDir, p)
		}
		cfg, err := kubeconfigFile(p, k.Context)
		if err != nil {
			return nil, &LocalConfigError{err}
		}
		return cfg, nil
	case k.SecretRef != nil:
		if opts.Management == nil {
			return nil, fmt.Errorf("kubeconfig Secret %s/%s: no management cluster to read it from", k.SecretRef.Namespace, k.SecretRef.Name)
		}
		data, err := ReadSecretKey(ctx, opts.Management, *k.SecretRef)
		if err != nil {
			return nil, err
		}
		return kubeconfigSecret(data, *k.SecretRef)
	case k.ClusterProfile != nil:
		if opts.ClusterProfile == nil {
			return nil, fmt.Errorf("ClusterProfile %s/%s: no inventory to read it from", k.ClusterProfile.Namespace, k.ClusterProfile.Name)
		}
		return opts.ClusterProfile(ctx, *k.ClusterProfile)
	case k.InCluster:
		f := opts.InClusterConfig
		if f == nil {
			f = rest.InClusterConfig
		}
		cfg, err := f()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config: %w", err)
		}
		return cfg, nil
	}
	return nil, errors.New("no kubeconfig configured: set kubeconfig.path, kubeconfig.secretRef, kubeconfig.inCluster or kubeconfig.clusterProfile")
}

// build makes the clients. One HTTP client is shared by all of them, so
// Collect, Watch and apply reuse connections.
func (m *Member) build(cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = UserAgent
	}
	// One token bucket for every client of the member (typed, dynamic,
	// metadata, and controller-runtime's one per kind), so the limit is
	// per member as documented. A kubeconfig's own limit is kept.
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		qps, burst := m.qps, m.burst
		if qps == 0 { // a member from NewSet: the defaults
			qps, burst = v1alpha1.SyncOptions{}.RateLimit()
		}
		cfg.QPS, cfg.Burst = qps, burst
		if qps > 0 {
			cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
		}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("building HTTP client: %w", err)
	}
	return m.buildWith(cfg, hc)
}

func (m *Member) buildWith(cfg *rest.Config, hc *http.Client) error {
	var err error
	if m.typed, err = kubernetes.NewForConfigAndClient(cfg, hc); err != nil {
		return fmt.Errorf("building client: %w", err)
	}
	if m.dynamic, err = dynamic.NewForConfigAndClient(cfg, hc); err != nil {
		return fmt.Errorf("building dynamic client: %w", err)
	}
	if m.metadata, err = metadata.NewForConfigAndClient(cfg, hc); err != nil {
		return fmt.Errorf("building metadata client: %w", err)
	}
	// The controller-runtime client's REST mapper is lazy: no request is
	// made until the client is first used.
	if m.Client, err = client.New(cfg, client.Options{Scheme: Scheme(), HTTPClient: hc}); err != nil {
		return fmt.Errorf("building client: %w", err)
	}
	m.Config = cfg
	return nil
}

// Concat is one Set of the members of sets, in order; a name in two of
// them is an error.
func Concat(sets ...*Set) (*Set, error) {
	s := &Set{byName: map[string]*Member{}}
	for _, o := range sets {
		for _, m := range o.members {
			if _, dup := s.byName[m.Name]; dup {
				return nil, fmt.Errorf("member %q appears twice", m.Name)
			}
			s.members = append(s.members, m)
			s.byName[m.Name] = m
		}
	}
	return s, nil
}
