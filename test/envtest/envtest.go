// SPDX-License-Identifier: Apache-2.0

// Package envtest owns the real control planes mcs-gitops tests run against:
// one kube-apiserver and etcd per member cluster, started with
// controller-runtime's envtest from the binaries `make testbin` builds, with the
// Multi-Cluster Services, Gateway API and GlobalTrafficPolicy CRDs installed and
// dual-stack, IPv4-only or IPv6-only Service ranges. It also
// holds the apply helpers those tests share. There are no fakes here: if the
// binaries are missing, tests fail and say how to build them.
package envtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/mcs-gitops/mcs-gitops/schemas/crds"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Stack is the IP families of a member's Service ranges. Real fleets mix
// them, and a single-stack apiserver refuses what a dual-stack one accepts
// (a Service pinning two families), so tests must be able to start each.
type Stack string

const (
	// DualStack is IPv4 primary, IPv6 secondary: Start's default, so that
	// IPv6-only and dual-stack Services validate.
	DualStack Stack = "dual-stack"
	// IPv4Only allocates only IPv4 cluster IPs.
	IPv4Only Stack = "IPv4"
	// IPv6Only allocates only IPv6 cluster IPs.
	IPv6Only Stack = "IPv6"
)

// ServiceCIDRs is the apiserver's --service-cluster-ip-range for the stack.
func (s Stack) ServiceCIDRs() string {
	switch s {
	case IPv4Only:
		return serviceCIDRv4
	case IPv6Only:
		return serviceCIDRv6
	}
	return serviceCIDRv4 + "," + serviceCIDRv6
}

const (
	serviceCIDRv4 = "10.96.0.0/16"
	serviceCIDRv6 = "fd00:10:96::/112"

	// ServiceCIDRs is the --service-cluster-ip-range of a DualStack member.
	ServiceCIDRs = serviceCIDRv4 + "," + serviceCIDRv6

	// FieldManager is the server-side apply field manager the tool uses, so
	// tests see the same ownership the real applier produces.
	FieldManager = "mcs-gitops"

	// envAssets is honoured first because it is the variable envtest users
	// already know; the Makefile sets it.
	envAssets = "KUBEBUILDER_ASSETS"
	// envTestbin is the variable test/testbin/build.sh builds into.
	envTestbin = "MCS_GITOPS_TESTBIN"
	// envAPIServer names the kube-apiserver binary in the assets
	// directory: kube-apiserver (the current version) unless set, e.g.
	// kube-apiserver-1.33 for the oldest supported one, which make test
	// runs the e2e core against (docs/compatibility.md).
	envAPIServer = "MCS_KUBE_APISERVER"
	// envStartTimeout lets a slow machine raise the per-process start limit
	// without code changes; envtest reads the same variable.
	envStartTimeout = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"
	// envAttachOutput makes envtest stream the processes' output instead of
	// keeping only a tail for failure messages.
	envAttachOutput = "KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT"

	// defaultStartTimeout is well above envtest's 20 s because N apiservers
	// start at once and share the CPU; on 2 cores each one takes several
	// times longer than it would alone.
	defaultStartTimeout = 2 * time.Minute
	// outputTail bounds how much apiserver/etcd output is kept per process for
	// a failure message.
	outputTail = 16 << 10
)

// Cluster is one running member cluster: a real kube-apiserver backed by its
// own etcd.
type Cluster struct {
	// Name is "cluster-1" … "cluster-N", in start order.
	Name string
	// Config reaches the apiserver as a system:masters user.
	Config *rest.Config
	// Client uses Scheme(), so typed core, discovery, apiextensions, MCS and
	// GlobalTrafficPolicy objects and unstructured objects all work.
	Client client.Client

	env *crenvtest.Environment
}

// Scheme returns a new scheme with every type the tests read or write:
// client-go's built-ins (core, discovery/v1, networking/v1, …),
// apiextensions/v1, both served versions of the MCS API and the project's
// GlobalTrafficPolicy.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(mcsv1alpha1.AddToScheme(s))
	utilruntime.Must(mcsv1beta1.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// AssetsDir returns the directory holding kube-apiserver and etcd:
// $KUBEBUILDER_ASSETS, else $MCS_GITOPS_TESTBIN, else
// $HOME/.cache/mcs-gitops/testbin (where `make testbin` builds them).
func AssetsDir() (string, error) {
	if d := os.Getenv(envAssets); d != "" {
		return d, nil
	}
	if d := os.Getenv(envTestbin); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the testbin cache: %w (set %s)", err, envAssets)
	}
	return filepath.Join(home, ".cache", "mcs-gitops", "testbin"), nil
}

// binaries returns the paths of kube-apiserver and etcd, or an error telling
// the user how to get them. A missing binary must never turn into a skipped
// test: a green run without apiservers would prove nothing.
func binaries() (apiserver, etcd string, err error) {
	dir, err := AssetsDir()
	if err != nil {
		return "", "", err
	}
	apiserver = "kube-apiserver"
	if n := os.Getenv(envAPIServer); n != "" {
		apiserver = n
	}
	var missing []error
	for _, name := range []string{apiserver, "etcd"} {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		switch {
		case err != nil:
			missing = append(missing, err)
		case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
			missing = append(missing, fmt.Errorf("%s: not an executable file", p))
		}
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("envtest binaries not usable in %s: %w\n"+
			"run `make testbin` to build them from the Go module proxy (first time ~7 min), "+
			"or point %s at a directory holding kube-apiserver and etcd",
			dir, errors.Join(missing...), envAssets)
	}
	return filepath.Join(dir, apiserver), filepath.Join(dir, "etcd"), nil
}

// Fleet is n running control planes, started together by Launch.
type Fleet struct {
	Clusters []*Cluster
	// Took is how long they took to become ready, together.
	Took    time.Duration
	members []*launched
}

type launched struct {
	env      *crenvtest.Environment
	out      *TailBuffer
	duration time.Duration
}

// Launch starts n control planes concurrently, each with the MCS, Gateway API
// and GlobalTrafficPolicy CRDs installed and its default ServiceCIDR ready. On failure every process
// that did start is stopped again and the error carries the tail of the
// failing apiserver's and etcd's output. Tests use Start; Launch is for
// programs such as the demo.
func Launch(n int) (*Fleet, error) {
	if n < 1 {
		return nil, fmt.Errorf("envtest: need at least one cluster, got %d", n)
	}
	stacks := make([]Stack, n)
	for i := range stacks {
		stacks[i] = DualStack
	}
	return LaunchStacks(stacks...)
}

// LaunchStacks is Launch with one member per stack, in order.
func LaunchStacks(stacks ...Stack) (*Fleet, error) {
	return launch(stacks, nil)
}

// launch starts one member per stack with every CRD but those named in
// omit.
func launch(stacks []Stack, omit []string) (*Fleet, error) {
	n := len(stacks)
	if n < 1 {
		return nil, fmt.Errorf("envtest: need at least one cluster, got %d", n)
	}
	apiserverPath, etcdPath, err := binaries()
	if err != nil {
		return nil, err
	}
	startTimeout := defaultStartTimeout
	if os.Getenv(envStartTimeout) != "" {
		startTimeout = 0 // envtest parses the variable itself
	}
	attach := os.Getenv(envAttachOutput) == "true"
	scheme := Scheme()
	f := &Fleet{Clusters: make([]*Cluster, n), members: make([]*launched, n)}
	for i := range f.members {
		crdObjs, err := crds.MCS()
		if err != nil {
			return nil, fmt.Errorf("envtest: %w", err)
		}
		gw, err := crds.GatewayAPI()
		if err != nil {
			return nil, fmt.Errorf("envtest: %w", err)
		}
		gtp, err := crds.GlobalTrafficPolicy()
		if err != nil {
			return nil, fmt.Errorf("envtest: %w", err)
		}
		crdObjs = append(crdObjs, gw...)
		crdObjs = append(crdObjs, gtp)
		crdObjs = slices.DeleteFunc(crdObjs, func(c *apiextensionsv1.CustomResourceDefinition) bool { return slices.Contains(omit, c.Name) })
		// Each environment gets its own CRD objects: InstallCRDs writes
		// server-assigned fields back into them.
		env := &crenvtest.Environment{
			Scheme:                   scheme,
			CRDs:                     crdObjs,
			UseExistingCluster:       ptr.To(false), // USE_EXISTING_CLUSTER would make all N the same cluster
			ControlPlaneStartTimeout: startTimeout,
			AttachControlPlaneOutput: attach,
		}
		out := &TailBuffer{Limit: outputTail}
		api := env.ControlPlane.GetAPIServer()
		api.Path = apiserverPath
		api.Configure().Set("service-cluster-ip-range", stacks[i].ServiceCIDRs())
		if stacks[i] == IPv6Only {
			// The apiserver advertises 127.0.0.1, and publishing an IPv4
			// endpoint for an IPv6 kubernetes Service is refused at start;
			// tests reach it directly and need no such endpoint.
			api.Configure().Set("endpoint-reconciler-type", "none")
		}
		env.ControlPlane.Etcd = &crenvtest.Etcd{Path: etcdPath}
		if !attach {
			api.Out, api.Err = out, out
			env.ControlPlane.Etcd.Out, env.ControlPlane.Etcd.Err = out, out
		}
		f.members[i] = &launched{env: env, out: out}
	}

	begin := time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range f.members {
		wg.Go(func() {
			name := clusterName(i)
			t0 := time.Now()
			cfg, err := m.env.Start()
			m.duration = time.Since(t0)
			if err != nil {
				errs[i] = fmt.Errorf("cluster %q: starting control plane: %w", name, err)
				return
			}
			c, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				errs[i] = fmt.Errorf("cluster %q: creating client: %w", name, err)
				return
			}
			if err := waitServiceCIDR(c); err != nil {
				errs[i] = fmt.Errorf("cluster %q: %w", name, err)
				return
			}
			f.Clusters[i] = &Cluster{Name: name, Config: cfg, Client: c, env: m.env}
		})
	}
	wg.Wait()
	f.Took = time.Since(begin)
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("%w\nlast output of its apiserver and etcd:\n%s", err, f.members[i].out.String()))
		}
	}
	if len(failed) > 0 {
		return nil, errors.Join(append(failed, f.Stop())...)
	}
	return f, nil
}

// Stop stops every control plane of the fleet, concurrently.
func (f *Fleet) Stop() error {
	errs := make([]error, len(f.members))
	var wg sync.WaitGroup
	for i, m := range f.members {
		wg.Go(func() {
			if err := m.env.Stop(); err != nil {
				errs[i] = fmt.Errorf("cluster %q: stopping control plane: %w", clusterName(i), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Start launches n control planes for a test, stops them when it ends, and
// fails the test, with the processes' output, when they do not come up.
func Start(t testing.TB, n int) []*Cluster {
	t.Helper()
	stacks := make([]Stack, n)
	for i := range stacks {
		stacks[i] = DualStack
	}
	return StartStacks(t, stacks...)
}

// StartWithout is Start with the named CRDs left out of every member: a
// member that never had them, for a test of what happens without one.
// Deleting a CRD after the start instead waits for its finalizer, which
// took over two minutes on a loaded machine.
func StartWithout(t testing.TB, n int, crds ...string) []*Cluster {
	t.Helper()
	stacks := make([]Stack, n)
	for i := range stacks {
		stacks[i] = DualStack
	}
	return startStacks(t, stacks, crds)
}

// StartStacks is Start with one member per stack, in order.
func StartStacks(t testing.TB, stacks ...Stack) []*Cluster {
	t.Helper()
	return startStacks(t, stacks, nil)
}

func startStacks(t testing.TB, stacks []Stack, omit []string) []*Cluster {
	t.Helper()
	f, err := launch(stacks, omit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Error(err)
		}
	})
	for i, c := range f.Clusters {
		t.Logf("cluster %q (%s): apiserver %s ready in %s", c.Name, stacks[i], c.Config.Host, f.members[i].duration.Round(time.Millisecond))
	}
	t.Logf("%d control planes ready in %s", len(stacks), f.Took.Round(time.Millisecond))
	return f.Clusters
}

// waitServiceCIDR waits for the apiserver's default ServiceCIDR to be Ready:
// until it is, creating a Service fails to allocate a cluster IP, and tests
// would flake on a slow machine.
func waitServiceCIDR(c client.Client) error {
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			sc := &networkingv1.ServiceCIDR{}
			if last = c.Get(ctx, client.ObjectKey{Name: "kubernetes"}, sc); last != nil {
				return false, nil
			}
			last = fmt.Errorf("conditions %+v", sc.Status.Conditions)
			return meta.IsStatusConditionTrue(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady), nil
		})
	if err != nil {
		return fmt.Errorf("default ServiceCIDR not ready: %w (last: %v)", err, last)
	}
	return nil
}

func clusterName(i int) string { return fmt.Sprintf("cluster-%d", i+1) }
