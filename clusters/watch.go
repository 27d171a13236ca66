// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// notOurs is the server-side selector that keeps objects mcs-gitops applied
// (derived Services, imported slices) out of the Service and EndpointSlice
// watches: applying them must not look like a change in the member.
var notOurs = labelManagedBy + "!=" + managedByValue

// watched is what Watch follows on every member.
var watched = []struct {
	gvr      schema.GroupVersionResource
	kind     string
	selector string
}{
	{serviceExportsGVR, "ServiceExport", ""},
	{servicesGVR, "Service", notOurs},
	{endpointSlicesGVR, "EndpointSlice", notOurs},
	{namespacesGVR, "Namespace", ""},
	{clusterPropertiesGVR, "ClusterProperty", ""},
	{globalTrafficPoliciesGVR, "GlobalTrafficPolicy", ""},
	{serviceCIDRsGVR, "ServiceCIDR", ""},
}

// optional are the kinds a member may well not serve (their CRD or API
// missing, or its ClusterRole predating their read): no outage, only
// something to pick up when it appears.
var optional = map[string]bool{"ClusterProperty": true, "GlobalTrafficPolicy": true, "ServiceCIDR": true}

// withStatus are the watched kinds whose status mcs-gitops writes back.
var withStatus = map[string]bool{"ServiceExport": true, "GlobalTrafficPolicy": true}

// Watch follows ServiceExports, Services, EndpointSlices, Namespaces,
// ClusterProperties, GlobalTrafficPolicies and ServiceCIDRs on every member with
// metadata-only informers and calls notify(member) on every add, update and
// delete that may change the member's snapshot: Services and EndpointSlices
// count only when their Service is exported; objects labelled as managed by
// mcs-gitops, pure resyncs (same resourceVersion) and status-only updates
// of ServiceExports and GlobalTrafficPolicies (mcs-gitops's own write-back)
// never. notify is also called when a member
// (or a resource of it) that could not be listed becomes readable again.
// notify is called from many goroutines and must not block for long.
//
// A member that is down or does not serve a resource (CRD missing) is
// retried with client-go's backoff without affecting the others; each
// outage is logged once. ClusterProperties and GlobalTrafficPolicies are
// optional: their CRD missing is logged at info level, and once it is
// installed the next retry lists them and notifies. Members without a client (Err set) are skipped and
// logged. Watch returns nil when ctx ends, after its informers stopped.
//
// While it runs, Collect reuses the last snapshot of a member whose watch
// has seen nothing since (see readReuse).
func (s *Set) Watch(ctx context.Context, notify func(member string)) error {
	// The reflectors' own klog lines would repeat every retry of a down
	// member; outages are logged once here instead.
	ictx := klog.NewContext(ctx, logr.Discard())
	var wg sync.WaitGroup
	for _, m := range s.members {
		if m.Err != nil {
			m.log().Warn("not watching member: it has no client", "error", m.Err)
			continue
		}
		w := &memberWatch{m: m, changed: func(namespace string) {
			m.reuse.touch(namespace) // before the loop hears of it: its cycle must read
			notify(m.Name)
		}}
		required := 0
		for _, r := range watched {
			if !optional[r.kind] {
				required++
			}
		}
		m.reuse.watchStarted(required)
		go m.warmMapper() // not waited for: a member that does not answer holds only this goroutine
		for _, r := range watched {
			inf := w.informer(r.gvr, r.kind, r.selector)
			wg.Go(func() { inf.RunWithContext(ictx) })
			if !optional[r.kind] {
				wg.Go(func() {
					if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
						m.reuse.listed()
					}
				})
			}
		}
	}
	<-ctx.Done()
	wg.Wait()
	for _, m := range s.members {
		if m.Err == nil {
			m.reuse.watchStopped()
		}
	}
	return nil
}

// memberWatch holds one member's informers.
type memberWatch struct {
	m *Member
	// changed is called with the namespace of each relevant event ("" for
	// a cluster-scoped object, or one it cannot tell).
	changed func(namespace string)
	// exports is the ServiceExport informer's store: Service and
	// EndpointSlice events matter only for exported Services.
	exports cache.Store
}

func (w *memberWatch) informer(gvr schema.GroupVersionResource, kind, selector string) cache.SharedIndexInformer {
	state := &resourceState{member: w.m.Name, kind: kind, notify: func() { w.changed("") }, log: w.m.log(), reuse: &w.m.reuse}
	client := w.m.metadata.Resource(gvr)
	tweak := func(o *metav1.ListOptions) {
		if selector != "" {
			o.LabelSelector = selector
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			obj, err := client.List(ctx, o)
			state.observe(err)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			wi, err := client.Watch(ctx, o)
			state.observe(err)
			return wi, err
		},
	}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, w.m.metadata),
		&metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	_ = inf.SetTransform(func(obj any) (any, error) {
		if o, ok := obj.(metav1.Object); ok {
			o.SetManagedFields(nil)
		}
		return obj, nil
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { state.observe(err) })
	if kind == "ServiceExport" {
		w.exports = inf.GetStore()
	}
	relevant := func(obj any) bool { return w.relevant(kind, obj) }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if relevant(obj) {
				w.changed(namespaceOf(obj))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := accessor(oldObj), accessor(newObj)
			if o != nil && n != nil && o.GetResourceVersion() == n.GetResourceVersion() {
				return // resync or relist of an unchanged object
			}
			if withStatus[kind] && o != nil && n != nil && statusOnly(o, n) {
				// Our own status write-back: acting on it would start a
				// cycle after every cycle that wrote a condition.
				return
			}
			if relevant(oldObj) || relevant(newObj) {
				w.changed(namespaceOf(newObj))
			}
		},
		DeleteFunc: func(obj any) {
			if relevant(obj) {
				w.changed(namespaceOf(obj))
			}
		},
	})
	return inf
}

// statusOnly reports whether an update of a custom resource with a status
// subresource changed nothing but its status: the spec bumps generation,
// and metadata the renderer reads is compared directly.
func statusOnly(o, n metav1.Object) bool {
	return o.GetGeneration() == n.GetGeneration() &&
		maps.Equal(o.GetLabels(), n.GetLabels()) &&
		maps.Equal(o.GetAnnotations(), n.GetAnnotations()) &&
		slices.Equal(o.GetFinalizers(), n.GetFinalizers()) &&
		o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
}

// relevant says whether an event on obj may change the member's snapshot.
func (w *memberWatch) relevant(kind string, obj any) bool {
	o := accessor(obj)
	if o == nil {
		return true
	}
	if o.GetLabels()[labelManagedBy] == managedByValue {
		return false
	}
	var service string
	switch kind {
	case "Service":
		service = o.GetName()
	case "EndpointSlice":
		if o.GetLabels()[discoveryv1.LabelManagedBy] == sliceManagedByValue {
			return false
		}
		service = o.GetLabels()[discoveryv1.LabelServiceName]
		if service == "" {
			return false
		}
	default:
		return true
	}
	if w.exports == nil {
		return true
	}
	_, exists, _ := w.exports.GetByKey(o.GetNamespace() + "/" + service)
	return exists
}

// namespaceOf is obj's namespace, "" when it has none or is unreadable.
func namespaceOf(obj any) string {
	if o := accessor(obj); o != nil {
		return o.GetNamespace()
	}
	return ""
}

func accessor(obj any) metav1.Object {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return o
}

// resourceState tracks whether one resource of one member can be listed and
// watched, to log each outage once, to notify when it ends, and to keep
// Collect from reusing a snapshot while the watch is blind.
type resourceState struct {
	member, kind string
	notify       func()
	reuse        *readReuse

	mu      sync.Mutex
	failing bool
	// counted: the current failure keeps the member's watch from being
	// live (an optional kind that is merely absent does not).
	counted bool
	log     *slog.Logger
}

func (r *resourceState) observe(err error) {
	if err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) {
		return // a normal relist, not an outage
	}
	absent := err != nil && optional[r.kind] && (apierrors.IsNotFound(err) || apierrors.IsForbidden(err))
	r.mu.Lock()
	was, counted := r.failing, r.counted
	r.failing = err != nil
	switch {
	case err != nil && !was:
		r.counted = !absent
	case err == nil:
		r.counted = false
	}
	r.mu.Unlock()
	switch {
	case err != nil && !was:
		if absent {
			r.reuse.touch("")
			r.log.Info("watch: member does not serve this kind, or does not let mcs-gitops read it; watching for that to change", "kind", r.kind, "error", err)
			return
		}
		r.reuse.failed()
		reason := classify(context.Background(), err)
		if apierrors.IsNotFound(err) {
			reason = ReasonCRDMissing
		}
		r.log.Warn("watch: cannot read member; retrying with backoff", "kind", r.kind,
			"reason", reason, "error", err)
	case err == nil && was:
		if counted {
			r.reuse.recovered()
		} else {
			r.reuse.touch("")
		}
		r.log.Info("watch: member readable again", "kind", r.kind)
		r.notify()
	}
}
