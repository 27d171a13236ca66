// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/deploy"
)

// Options say what to join and how.
type Options struct {
	// Member is the member's name in the ClusterSet.
	Member string
	// Admin reaches the member with rights to install CRDs and RBAC. Its
	// credentials are used for the installation only, never written out.
	Admin *rest.Config
	// Server is the member API URL the management cluster uses; empty
	// means Admin's.
	Server string
	// Management receives the kubeconfig Secret and the Role grant; nil
	// when the kubeconfig goes to a file instead (Result.Kubeconfig).
	Management client.Client
	// Namespace is where mcs-gitops runs in the management cluster.
	Namespace string

	// Gateway installs the Gateway API CRDs (gateway mode).
	Gateway bool
	// CreateNamespaces grants create on Namespaces
	// (spec.render.createMissingNamespaces).
	CreateNamespaces bool
	// AdmissionPolicy installs the member admission policy; "auto" (the
	// default) when the member serves ValidatingAdmissionPolicy, "always"
	// fails without it, "never" skips it.
	AdmissionPolicy string
	// DNS, when set, makes the member's CoreDNS serve Zone.
	DNS  *CoreDNS
	Zone string

	// TokenTTL is how long the token lives; a token kept from an earlier
	// join must have at least half of it left. Rotate issues a new one
	// regardless.
	TokenTTL time.Duration
	Rotate   bool

	// CRDDeleteTimeout is how long join waits for a CRD that is being
	// deleted to go before it installs it again; zero means
	// DefaultCRDDeleteTimeout.
	CRDDeleteTimeout time.Duration

	// ClusterProfile also registers the member in the cluster inventory
	// of the management cluster: a ClusterProfile in ProfileNamespace
	// (default Namespace) managed by ClusterManager, whose access
	// provider reads the token Secret join writes beside the kubeconfig
	// Secret. ClusterID, when set, is its cluster.clusterset.k8s.io
	// property.
	ClusterProfile   bool
	ProfileNamespace string
	ClusterID        string

	// DryRun changes nothing: every write is a server-side dry run.
	DryRun bool
	// Out receives one line per object and the Corefile diff.
	Out io.Writer
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Result is what a join produced.
type Result struct {
	// Kubeconfig is the member's least-privilege kubeconfig (a bearer
	// token): a credential, for a file of mode 0600 or the Secret only.
	// Nil in a dry run.
	Kubeconfig []byte
	// TokenExpires is when its token expires.
	TokenExpires time.Time
	// TokenKept is true when the Secret's token was still good and kept.
	TokenKept bool
}

// Admission policy modes.
const (
	PolicyAuto   = "auto"
	PolicyAlways = "always"
	PolicyNever  = "never"
)

// Join installs what the member needs and hands its identity to the
// management cluster. Every step is idempotent: a second join with the
// same options reports every object unchanged and keeps the token.
func Join(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	c, cs, err := adminClients(o.Admin)
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", o.Member, err)
	}
	r := &reporter{out: o.Out, where: "member " + o.Member, dryRun: o.DryRun}

	want, err := wantedCRDs(o.Gateway)
	if err != nil {
		return nil, err
	}
	for _, crd := range want {
		if err := r.installCRD(ctx, c, crd, o.CRDDeleteTimeout); err != nil {
			return nil, err
		}
	}
	sets := [][]string{deploy.MemberRole}
	if o.CreateNamespaces {
		sets = append(sets, deploy.CreateNamespaces)
	}
	policy, err := wantPolicy(ctx, cs, o.AdmissionPolicy)
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", o.Member, err)
	}
	if policy {
		sets = append(sets, deploy.AdmissionPolicy)
	} else if o.AdmissionPolicy == PolicyAuto {
		fmt.Fprintf(o.Out, "%s: no ValidatingAdmissionPolicy API (Kubernetes < 1.30): the admission policy is not installed; keep the member credential where only the management cluster can read it\n", r.where)
	}
	objs, err := deploy.Objects(slices.Concat(sets...)...)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if err := r.apply(ctx, c, obj); err != nil {
			return nil, err
		}
	}
	if o.DNS != nil {
		if err := r.configureDNS(ctx, c, *o.DNS, o.Zone); err != nil {
			return nil, err
		}
	}
	if o.DryRun {
		fmt.Fprintf(o.Out, "%s: a token for ServiceAccount %s would be requested (lifetime %s)\n", r.where, MemberUser, o.TokenTTL)
		if o.Management != nil {
			m := &reporter{out: o.Out, where: "management cluster", dryRun: true}
			fmt.Fprintf(o.Out, "%s: Secret %s/%s would be written\n", m.where, o.Namespace, SecretName(o.Member))
			if err := m.grantSecret(ctx, o.Management, o.Namespace, o.Member, true); err != nil {
				return nil, err
			}
		}
		return &Result{}, nil
	}
	res, err := o.credential(ctx, cs)
	if err != nil {
		return nil, err
	}
	if o.Management != nil {
		m := &reporter{out: o.Out, where: "management cluster"}
		if err := m.writeSecret(ctx, o.Management, o.Namespace, o.Member, res.Kubeconfig); err != nil {
			return nil, err
		}
		if err := m.grantSecret(ctx, o.Management, o.Namespace, o.Member, true); err != nil {
			return nil, err
		}
		if o.ClusterProfile {
			if err := m.registerProfile(ctx, o.Management, o, res.Kubeconfig); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// credential keeps the token of the member's Secret while it still
// authenticates, points at the same server and has half its lifetime
// left; otherwise it issues a new one.
func (o *Options) credential(ctx context.Context, cs kubernetes.Interface) (*Result, error) {
	server := o.Server
	if server == "" {
		server = o.Admin.Host
	}
	if o.Management != nil && !o.Rotate {
		old, err := readSecretKubeconfig(ctx, o.Management, o.Namespace, o.Member)
		if err != nil {
			return nil, err
		}
		if tok, srv, ok := kubeconfigToken(old); ok && srv == server {
			exp, hasExp := TokenExpiry(tok)
			if hasExp && exp.Sub(o.Now()) > o.TokenTTL/2 {
				if cfg, err := restConfig(old); err == nil && authenticatesAs(ctx, withAdminTransport(cfg, o.Admin), MemberUser) {
					fmt.Fprintf(o.Out, "member %s: token kept (expires %s)\n", o.Member, exp.UTC().Format(time.RFC3339))
					return &Result{Kubeconfig: old, TokenExpires: exp, TokenKept: true}, nil
				}
			}
		}
	}
	tok, exp, err := issueToken(ctx, cs, o.TokenTTL)
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", o.Member, err)
	}
	kc, err := memberKubeconfig(o.Member, o.Admin, o.Server, tok)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "member %s: token issued for %s (expires %s)\n", o.Member, MemberUser, exp.UTC().Format(time.RFC3339))
	return &Result{Kubeconfig: kc, TokenExpires: exp}, nil
}

// withAdminTransport checks a kept token over the administrator's route
// to the member: the Secret's server may be an address only the
// management cluster can reach.
func withAdminTransport(cfg, admin *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = admin.Host
	return c
}

func (o *Options) defaults() error {
	var errs []error
	if o.Member == "" {
		errs = append(errs, errors.New("no member name"))
	}
	if o.Admin == nil {
		errs = append(errs, errors.New("no administrator config for the member"))
	}
	if o.Namespace == "" {
		o.Namespace = "mcs-gitops"
	}
	if o.ProfileNamespace == "" {
		o.ProfileNamespace = o.Namespace
	}
	if o.ClusterProfile && o.Management == nil {
		errs = append(errs, errors.New("registering a ClusterProfile needs the management cluster"))
	}
	if o.Zone == "" {
		o.Zone = "clusterset.local"
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.CRDDeleteTimeout <= 0 {
		o.CRDDeleteTimeout = DefaultCRDDeleteTimeout
	}
	switch o.AdmissionPolicy {
	case "":
		o.AdmissionPolicy = PolicyAuto
	case PolicyAuto, PolicyAlways, PolicyNever:
	default:
		errs = append(errs, fmt.Errorf("admission policy mode %q: want %s, %s or %s", o.AdmissionPolicy, PolicyAuto, PolicyAlways, PolicyNever))
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return errors.Join(errs...)
}

// DefaultTokenTTL is a year: long enough that a forgotten rotation does
// not stop a fleet on a weekend, short enough that a leaked Secret does
// not stay good forever. `mcs-gitops doctor` warns a month before expiry.
const DefaultTokenTTL = 365 * 24 * time.Hour

// DefaultCRDDeleteTimeout is twice the minute the apiserver's CRD
// finalizer can spend deleting a CRD's objects on a busy member.
const DefaultCRDDeleteTimeout = 2 * time.Minute

// wantPolicy decides whether to install the admission policy. Only a
// member that says it does not serve the API goes without: one that could
// not be asked is an error, since skipping the policy on a passing fault
// would leave the member without the guard it was meant to get.
func wantPolicy(ctx context.Context, cs kubernetes.Interface, mode string) (bool, error) {
	if mode == PolicyNever {
		return false, nil
	}
	res, err := clusters.ServedResources(ctx, cs, "admissionregistration.k8s.io/v1")
	if err != nil {
		return false, fmt.Errorf("cannot tell whether it serves ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1): %w; join again, or pass --admission-policy never to go without it", err)
	}
	_, served := res["validatingadmissionpolicies"]
	if !served && mode == PolicyAlways {
		return false, errors.New("the member does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes 1.30 or later)")
	}
	return served, nil
}

func adminClients(cfg *rest.Config) (client.Client, kubernetes.Interface, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("administrator client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("administrator client: %w", err)
	}
	return c, cs, nil
}

// Entry is the clusterset.yaml member entry for a joined member whose
// kubeconfig is in the management Secret, or in the file path when
// secretNamespace is empty.
func Entry(member, secretNamespace, path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n    kubeconfig:\n", member)
	if secretNamespace != "" {
		fmt.Fprintf(&b, "      secretRef: {namespace: %s, name: %s}\n", secretNamespace, SecretName(member))
	} else {
		fmt.Fprintf(&b, "      path: %s\n", path)
	}
	return b.String()
}
