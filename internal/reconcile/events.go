// SPDX-License-Identifier: Apache-2.0

package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"

	"github.com/mcs-gitops/mcs-gitops/apply"
	"github.com/mcs-gitops/mcs-gitops/clusters"
)

// EventsComponent is the reportingController of every Event mcs-gitops
// emits.
const EventsComponent = "mcs-gitops"

// memberEvents is one member's client-go event broadcaster, which
// aggregates repeats into series and writes asynchronously. It counts
// what was emitted and what reached the sink so that a one-shot sync can
// wait for its Events before the process exits.
type memberEvents struct {
	broadcaster events.EventBroadcaster
	recorder    events.EventRecorder
	cancel      context.CancelFunc
	sent, done  atomic.Int64
}

func (e *memberEvents) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	e.sent.Add(1)
	e.recorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// countingSink counts the Events written.
type countingSink struct {
	events.EventSink
	done *atomic.Int64
}

func (s countingSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	defer s.done.Add(1)
	return s.EventSink.Create(ctx, ev)
}

// eventsFor is the member's recorder, made on first use; nil when events
// are off or the member has no client.
func (l *Loop) eventsFor(m *clusters.Member) apply.Events {
	if !l.Events || m.Config == nil {
		return nil
	}
	if e, ok := l.recorders.Load(m.Name); ok {
		return e.(*memberEvents)
	}
	cs, err := kubernetes.NewForConfig(m.Config)
	if err != nil {
		l.log().Warn("no events for member", "member", m.Name, "err", err)
		return nil
	}
	e := &memberEvents{}
	e.broadcaster = events.NewBroadcaster(countingSink{&events.EventSinkImpl{Interface: cs.EventsV1()}, &e.done})
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	if err := e.broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		l.log().Warn("no events for member", "member", m.Name, "err", err)
		return nil
	}
	e.recorder = e.broadcaster.NewRecorder(clusters.Scheme(), EventsComponent)
	actual, loaded := l.recorders.LoadOrStore(m.Name, e)
	if loaded {
		cancel()
		e.broadcaster.Shutdown()
	}
	return actual.(*memberEvents)
}

// CloseEvents waits up to timeout for the Events emitted so far to be
// written (an Event folded into a series may never be, hence the bound),
// then stops every member's broadcaster; the loop can go on, with new
// ones.
func (l *Loop) CloseEvents(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	var wg sync.WaitGroup
	l.recorders.Range(func(k, v any) bool {
		// A later cycle starts a new broadcaster.
		l.recorders.Delete(k)
		e := v.(*memberEvents)
		wg.Go(func() {
			for e.done.Load() < e.sent.Load() && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			e.cancel()
			e.broadcaster.Shutdown()
		})
		return true
	})
	wg.Wait()
}
