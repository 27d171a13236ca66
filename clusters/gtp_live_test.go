// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/crds"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"github.com/mcs-gitops/mcs-gitops/test/tenant"
)

func gtp(namespace, name string, lb v1alpha1.LoadBalancerType, targets ...string) *v1alpha1.GlobalTrafficPolicy {
	p := &v1alpha1.GlobalTrafficPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1alpha1.GlobalTrafficPolicySpec{LbType: lb},
	}
	for _, k := range targets {
		p.Spec.Targets = append(p.Spec.Targets, v1alpha1.TrafficTarget{ClusterKey: k})
	}
	return p
}

// resolver is an injected LookupHost that records what it was asked.
type resolver struct {
	mu     sync.Mutex
	asked  []string
	answer func(ctx context.Context, host string) ([]string, error)
}

func (r *resolver) lookup(ctx context.Context, host string) ([]string, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	return r.answer(ctx, host)
}

func (r *resolver) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}

// testGatewayLookup runs inside TestLive on the seeded cluster-1: every
// member below reads the same apiserver, only their gateway hosts differ.
func testGatewayLookup(t *testing.T, c1 *envtest.Cluster) {
	ctx := context.Background()
	answers := &resolver{answer: func(context.Context, string) ([]string, error) {
		return []string{"fd00::0a", "192.0.2.10", "192.0.2.9", "192.0.2.10", "not-an-ip"}, nil
	}}
	ipHost := &resolver{answer: func(context.Context, string) ([]string, error) { return nil, errors.New("must not be asked") }}
	nxdomain := &resolver{answer: func(_ context.Context, host string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	noIP := &resolver{answer: func(context.Context, string) ([]string, error) { return []string{"gw.example.net"}, nil }}
	hung := &resolver{answer: func(ctx context.Context, _ string) ([]string, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	member := func(name, host string, r *resolver) *clusters.Member {
		m := &clusters.Member{Name: name, Config: c1.Config, GatewayHost: host}
		if r != nil {
			m.LookupHost = r.lookup
		}
		return m
	}
	set := memberSet(t,
		member("dns", "gw.cluster-1.example", answers),
		member("ip", "192.0.2.1", ipHost),
		member("none", "", ipHost),
		member("nxdomain", "gw.gone.example", nxdomain),
		member("no-ip", "gw.cname.example", noIP),
		member("hung", "gw.slow.example", hung),
		member("system", "localhost", nil),
	)
	const timeout = 3 * time.Second
	begin := time.Now()
	res := set.Collect(ctx, timeout)
	if took := time.Since(begin); took > timeout+time.Second {
		t.Errorf("Collect took %s with a %s timeout", took, timeout)
	}
	for _, r := range res {
		if r.Err != nil || r.Snapshot == nil || len(r.Snapshot.ServiceExports) == 0 {
			t.Fatalf("member %s: a gateway lookup must not fail the read: %v (%s)", r.Member, r.Err, r.Reason)
		}
	}

	dns := result(t, res, "dns")
	if want := []string{"192.0.2.9", "192.0.2.10", "fd00::a"}; !slices.Equal(dns.Snapshot.GatewayAddresses, want) || dns.GatewayErr != nil {
		t.Errorf("dns: addresses %v err %v, want %v", dns.Snapshot.GatewayAddresses, dns.GatewayErr, want)
	}
	if got := answers.calls(); !slices.Equal(got, []string{"gw.cluster-1.example"}) {
		t.Errorf("resolver asked %v", got)
	}
	// Collected addresses survive the inputs/ round trip unchanged.
	formatted, err := snapshot.Format(dns.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := snapshot.Parse("dns", "dns.yaml", formatted)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(parsed.GatewayAddresses, dns.Snapshot.GatewayAddresses) {
		t.Errorf("after Format and Parse: %v", parsed.GatewayAddresses)
	}

	for _, m := range []string{"ip", "none"} {
		if r := result(t, res, m); len(r.Snapshot.GatewayAddresses) != 0 || r.GatewayErr != nil {
			t.Errorf("%s: addresses %v err %v, want none: an IP address is the config's to say", m, r.Snapshot.GatewayAddresses, r.GatewayErr)
		}
	}
	if got := ipHost.calls(); len(got) != 0 {
		t.Errorf("an IP host or no gateway was looked up: %v", got)
	}
	for m, want := range map[string]string{"nxdomain": "no such host", "no-ip": "no IP address", "hung": "deadline exceeded"} {
		r := result(t, res, m)
		if r.GatewayErr == nil || !strings.Contains(r.GatewayErr.Error(), want) ||
			!strings.Contains(r.GatewayErr.Error(), `member "`+m+`"`) || !strings.Contains(r.GatewayErr.Error(), set.Member(m).GatewayHost) {
			t.Errorf("%s: GatewayErr %v, want it to name the member, the host and %q", m, r.GatewayErr, want)
		}
		if len(r.Snapshot.GatewayAddresses) != 0 {
			t.Errorf("%s: addresses %v after a failed lookup", m, r.Snapshot.GatewayAddresses)
		}
	}
	if r := result(t, res, "system"); r.GatewayErr != nil || !slices.Contains(r.Snapshot.GatewayAddresses, "127.0.0.1") {
		t.Errorf("default resolver on localhost: %v %v", r.Snapshot.GatewayAddresses, r.GatewayErr)
	}
}

// testPolicyCRDMissing runs inside TestLive after the watch test: it
// removes the GlobalTrafficPolicy CRD from cluster-2 and installs it again.
func testPolicyCRDMissing(t *testing.T, c2 *envtest.Cluster) {
	ctx := context.Background()
	tenant.Create(t, c2.Client, gtp("only-in-2", "web", v1alpha1.ActiveActive))
	set := memberSet(t, &clusters.Member{Name: "cluster-2", Config: c2.Config})
	if r := set.Collect(ctx, 10*time.Second)[0]; r.Err != nil || len(r.Snapshot.GlobalTrafficPolicies) != 1 {
		t.Fatalf("before: %v, policies %+v", r.Err, r.Snapshot)
	}

	n := make(notifications, 1024)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- set.Watch(wctx, n.notify) }()
	defer func() {
		cancel()
		<-done
	}()
	n.waitFor(t, "cluster-2", 10*time.Second)

	crd, err := crds.GlobalTrafficPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Client.Delete(ctx, crd); err != nil {
		t.Fatal(err)
	}
	// The CRD finalizer can take a minute on a loaded machine.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c2.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd)), nil
	})
	if err != nil {
		t.Fatalf("CRD not deleted: %v", err)
	}
	var last clusters.Result
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = set.Collect(ctx, 10*time.Second)[0]
		return last.Err == nil && len(last.Snapshot.GlobalTrafficPolicies) == 0, nil
	})
	if err != nil {
		t.Fatalf("without the CRD: err %v reason %q; want a snapshot without policies", last.Err, last.Reason)
	}
	if len(last.Snapshot.ServiceExports) == 0 {
		t.Error("without the policy CRD the exports went missing too")
	}
	n.settle(time.Second)

	fresh, err := crds.GlobalTrafficPolicy()
	if err != nil {
		t.Fatal(err)
	}
	installCRD(t, c2.Client, fresh)
	// The informer, retrying with backoff since the CRD went, lists again
	// and says the kind is readable; then it follows it as before.
	took := n.waitFor(t, "cluster-2", 60*time.Second)
	t.Logf("CRD installed → notify in %s", took)
	n.settle(500 * time.Millisecond)
	tenant.Create(t, c2.Client, gtp("only-in-2", "web", v1alpha1.Locality))
	n.waitFor(t, "cluster-2", 5*time.Second)
	formatted, err := snapshot.Format(set.Collect(ctx, 10*time.Second)[0].Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(formatted, []byte("lbType: Locality")) {
		t.Errorf("policy created after the CRD came back is not collected:\n%s", formatted)
	}
}
