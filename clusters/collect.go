package clusters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// DefaultTimeout is used by Collect when it is given no positive timeout.
const DefaultTimeout = 10 * time.Second

// Result is what reading one member gave: a Snapshot, or Err with a Reason
// (one of the Reason* constants). Err names the member and never contains a
// credential.
type Result struct {
	Member   string
	Snapshot *snapshot.Snapshot
	Err      error
	Reason   string
	// GatewayErr is set, with Err nil, when the member was read but its
	// gateway host, a DNS name, could not be resolved (lookup failed, no
	// IP address in the answer, or no answer within the timeout). Its
	// Snapshot.GatewayAddresses is then empty: the caller should keep the
	// last committed addresses rather than render the gateway unreachable
	// because of a DNS hiccup. It names the member and the host.
	GatewayErr error
}

// Collect reads every member in parallel, each bounded by timeout, and
// returns one Result per member in config order. One slow or broken member
// never delays the others beyond timeout.
func (s *Set) Collect(ctx context.Context, timeout time.Duration) []Result {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	out := make([]Result, len(s.members))
	var wg sync.WaitGroup
	for i, m := range s.members {
		wg.Go(func() { out[i] = collectMember(ctx, m, timeout) })
	}
	wg.Wait()
	return out
}

func collectMember(parent context.Context, m *Member, timeout time.Duration) Result {
	if m.Err != nil {
		return Result{Member: m.Name, Err: m.Err, Reason: ReasonConfig}
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	gateway := m.lookupGateway(ctx)
	done := make(chan Result, 1)
	go func() {
		snap, err := m.read(ctx)
		if err != nil {
			// client-go quotes the request URL, userinfo and all.
			done <- Result{Member: m.Name, Err: v1alpha1.RedactError(fmt.Errorf("member %q: %w", m.Name, err)), Reason: classify(ctx, err)}
			return
		}
		done <- Result{Member: m.Name, Snapshot: snap}
	}()
	select {
	case r := <-done:
		if r.Err == nil {
			// Waited for only after the read: the read decides whether
			// the member is up, the lookup only what its gateway is.
			r.Snapshot.GatewayAddresses, r.GatewayErr = gateway()
		}
		return r
	case <-ctx.Done():
		// Every request carries ctx, so the reader ends soon; do not wait for it.
		err := ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no complete answer within %s", timeout)
		}
		return Result{Member: m.Name, Err: fmt.Errorf("member %q: %w", m.Name, err), Reason: ReasonTimeout}
	}
}
