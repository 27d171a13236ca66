// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// Forget makes the next Collect read every member, reused snapshots or
// not: run calls it on every resync.
func (s *Set) Forget() {
	for _, m := range s.members {
		m.reuse.forget()
	}
}

// ping asks the member whether it answers at all: the cheapest request
// every identity may make.
func (m *Member) ping(ctx context.Context) error {
	if err := m.typed.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		return fmt.Errorf("asking whether it is up (GET /version): %w", err)
	}
	return nil
}

// Reads gives snapshot.Resolve what it needs of one round of results: a
// member that failed without a reason counts as unreachable.
func Reads(results []Result) []snapshot.Read {
	out := make([]snapshot.Read, len(results))
	for i, r := range results {
		out[i] = snapshot.Read{Member: r.Member, GatewayUnresolved: r.GatewayErr != nil}
		switch {
		case r.Err == nil && r.Snapshot != nil:
			out[i].Snapshot = r.Snapshot
		case r.Reason == "":
			out[i].Reason = ReasonUnreachable
		default:
			out[i].Reason = r.Reason
		}
	}
	return out
}

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
	// Reused is set when the member was not listed: a running Watch had
	// seen nothing since the last read, whose snapshot this is (the
	// member was still asked whether it is up, and its gateway host
	// resolved again).
	Reused bool
	// Namespaces are the only namespaces listed, when a running Watch had
	// seen changes in those alone since the last read: the rest of the
	// snapshot is that read's.
	Namespaces []string
	// Took is how long reading the member took, whatever the outcome: a
	// read that ends in a timeout took the whole timeout.
	Took time.Duration
}

// Collect reads every member in parallel, each bounded by timeout, and
// returns one Result per member in config order. One slow or broken member
// never delays the others beyond timeout.
//
// While Watch runs, a member whose watch has seen nothing since its last
// read is not listed again (Result.Reused). Its snapshot may then miss a
// change whose event is still on its way; that event notifies the loop,
// whose next cycle reads the member.
func (s *Set) Collect(ctx context.Context, timeout time.Duration) []Result {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	out := make([]Result, len(s.members))
	var wg sync.WaitGroup
	for i, m := range s.members {
		wg.Go(func() {
			start := time.Now()
			out[i] = collectMember(ctx, m, timeout)
			out[i].Took = time.Since(start)
		})
	}
	wg.Wait()
	return out
}

func collectMember(parent context.Context, m *Member, timeout time.Duration) Result {
	if m.Err != nil {
		return Result{Member: m.Name, Err: m.Err, Reason: errReason(m.Err)}
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	gateway := m.lookupGateway(ctx)
	done := make(chan Result, 1)
	go func() {
		last, changed, gen, watched := m.reuse.begin()
		if last != nil && changed == nil {
			// Nothing changed, but the member must still answer: a read
			// is what says it is up.
			if err := m.ping(ctx); err != nil {
				m.reuse.forget()
				done <- Result{Member: m.Name, Err: redact.Error(fmt.Errorf("member %q: %w", m.Name, err)), Reason: classify(ctx, err)}
				return
			}
			done <- Result{Member: m.Name, Snapshot: last, Reused: true}
			return
		}
		var snap *snapshot.Snapshot
		var err error
		if last != nil {
			snap, err = m.readChanged(ctx, last, changed)
		} else {
			snap, err = m.read(ctx)
		}
		if err != nil {
			m.reuse.forget()
			// client-go quotes the request URL, userinfo and all.
			done <- Result{Member: m.Name, Err: redact.Error(fmt.Errorf("member %q: %w", m.Name, err)), Reason: classify(ctx, err)}
			return
		}
		if watched {
			m.reuse.store(gen, snap)
		}
		done <- Result{Member: m.Name, Snapshot: snap, Namespaces: changed}
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
