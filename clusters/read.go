// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Resources read from and watched on every member.
var (
	serviceExportsGVR    = schema.GroupVersionResource{Group: mcsv1alpha1.GroupName, Version: "v1alpha1", Resource: "serviceexports"}
	clusterPropertiesGVR = schema.GroupVersionResource{Group: "about.k8s.io", Version: "v1alpha1", Resource: "clusterproperties"}
	servicesGVR          = corev1.SchemeGroupVersion.WithResource("services")
	endpointSlicesGVR    = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	namespacesGVR        = corev1.SchemeGroupVersion.WithResource("namespaces")
	serviceCIDRsGVR      = networkingv1.SchemeGroupVersion.WithResource("servicecidrs")
)

// Labels that mark objects mcs-gitops applied itself; they are never read
// back as a member's own state.
const (
	labelManagedBy      = "app.kubernetes.io/managed-by"
	managedByValue      = "mcs-gitops"
	sliceManagedByValue = "mcs-gitops.io"
)

// namespaceParallelism bounds concurrent per-namespace requests to one member.
const namespaceParallelism = 8

// maxSelectorValues is how many service names go into one label selector
// before listing the namespace's slices and filtering locally instead.
const maxSelectorValues = 50

func managedByUs(l map[string]string) bool {
	return l[labelManagedBy] == managedByValue || l[discoveryv1.LabelManagedBy] == sliceManagedByValue
}

// read collects one member's snapshot: ServiceExports, the Services they
// export, those Services' EndpointSlices, Namespaces, GlobalTrafficPolicies
// and the cluster ID ClusterProperty. Objects look exactly as snapshot.Parse
// would decode them from `kubectl get -o yaml` (apiVersion and kind set,
// managedFields left out, a policy's status dropped), sorted the same way.
// The gateway addresses are not read here (see lookupGateway).
func (m *Member) read(ctx context.Context) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{Member: m.Name}
	var err error
	if err = m.readNamespaced(ctx, s, nil); err != nil {
		return nil, err
	}
	if s.Namespaces, err = m.readNamespaces(ctx); err != nil {
		return nil, err
	}
	if s.ClusterID, err = m.readClusterID(ctx); err != nil {
		return nil, err
	}
	if s.ServiceCIDRs, err = m.readServiceCIDRs(ctx); err != nil {
		return nil, err
	}
	sortSnapshot(s)
	return s, nil
}

// readChanged is read when a watch saw changes in the given namespaces
// alone since last was read: those namespaces are listed, the rest of
// last is kept (readReuse says why that is what read would give). last's
// slices are shared with earlier results and are not modified.
func (m *Member) readChanged(ctx context.Context, last *snapshot.Snapshot, namespaces []string) (*snapshot.Snapshot, error) {
	fresh := &snapshot.Snapshot{Member: m.Name}
	if err := m.readNamespaced(ctx, fresh, namespaces); err != nil {
		return nil, err
	}
	s := *last
	s.ServiceExports = spliceNamespaces(last.ServiceExports, fresh.ServiceExports, namespaces, func(o *mcsv1alpha1.ServiceExport) string { return o.Namespace })
	s.Services = spliceNamespaces(last.Services, fresh.Services, namespaces, func(o *corev1.Service) string { return o.Namespace })
	s.EndpointSlices = spliceNamespaces(last.EndpointSlices, fresh.EndpointSlices, namespaces, func(o *discoveryv1.EndpointSlice) string { return o.Namespace })
	s.GlobalTrafficPolicies = spliceNamespaces(last.GlobalTrafficPolicies, fresh.GlobalTrafficPolicies, namespaces, func(o *v1alpha1.GlobalTrafficPolicy) string { return o.Namespace })
	s.Rejected = spliceNamespaces(last.Rejected, fresh.Rejected, namespaces, func(o *snapshot.Rejected) string { return o.Namespace })
	sortSnapshot(&s)
	return &s, nil
}

// spliceNamespaces is a new slice of the items of last outside namespaces
// (sorted), then fresh; nil when there are none, as a read gives.
func spliceNamespaces[T any](last, fresh []T, namespaces []string, namespace func(*T) string) []T {
	var out []T
	for i := range last {
		if _, in := slices.BinarySearch(namespaces, namespace(&last[i])); !in {
			out = append(out, last[i])
		}
	}
	return append(out, fresh...)
}

// readNamespaced reads into s what the snapshot holds of namespaces
// (nil: every namespace): ServiceExports, the Services they export and
// those Services' EndpointSlices, GlobalTrafficPolicies, and what of
// them does not load (Rejected).
func (m *Member) readNamespaced(ctx context.Context, s *snapshot.Snapshot, namespaces []string) error {
	var err error
	if s.ServiceExports, s.Rejected, err = m.readExports(ctx, namespaces); err != nil {
		return err
	}
	exported := map[string][]string{}
	for _, se := range s.ServiceExports {
		exported[se.Namespace] = append(exported[se.Namespace], se.Name)
	}
	if s.Services, err = m.readServices(ctx, exported); err != nil {
		return err
	}
	withService := map[string][]string{}
	for _, svc := range s.Services {
		withService[svc.Namespace] = append(withService[svc.Namespace], svc.Name)
	}
	if s.EndpointSlices, err = m.readSlices(ctx, withService); err != nil {
		return err
	}
	s.Services = dropUnloadable(m, s, s.Services, func(svc *corev1.Service) string { return svc.Name })
	s.EndpointSlices = dropUnloadable(m, s, s.EndpointSlices, func(sl *discoveryv1.EndpointSlice) string {
		return sl.Labels[discoveryv1.LabelServiceName]
	})
	if s.GlobalTrafficPolicies, err = m.readPolicies(ctx, namespaces); err != nil {
		return err
	}
	return nil
}

// listIn lists gvr in every namespace (namespaces nil) or in each of
// namespaces, a few at a time.
func (m *Member) listIn(ctx context.Context, gvr schema.GroupVersionResource, namespaces []string) ([]unstructured.Unstructured, error) {
	if namespaces == nil {
		list, err := m.dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return list.Items, nil
	}
	byNS := make(map[string][]string, len(namespaces))
	for _, ns := range namespaces {
		byNS[ns] = nil
	}
	return perNamespace(ctx, byNS, func(ctx context.Context, ns string, _ []string) ([]unstructured.Unstructured, error) {
		list, err := m.dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return list.Items, nil
	})
}

// readExports lists the ServiceExports. One that does not load but names a
// possible Service is returned as rejected, so its export is reported.
func (m *Member) readExports(ctx context.Context, namespaces []string) ([]mcsv1alpha1.ServiceExport, []snapshot.Rejected, error) {
	items, err := m.listIn(ctx, serviceExportsGVR, namespaces)
	if apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("listing ServiceExports (%s): %w", serviceExportsGVR.GroupVersion(), errCRDMissing)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listing ServiceExports: %w", err)
	}
	var out []mcsv1alpha1.ServiceExport
	var rejected []snapshot.Rejected
	err = m.loadThroughParse(items, namespaces != nil, mcsv1alpha1.GroupVersion.String(), "ServiceExport", func(s *snapshot.Snapshot) {
		out = append(out, s.ServiceExports...)
	}, func(u *unstructured.Unstructured, err error) {
		r := snapshot.Rejected{Kind: "ServiceExport", Namespace: u.GetNamespace(), Name: u.GetName(), Service: u.GetName(),
			Message: snapshot.RejectionMessage(err)}
		// An export whose name no Service can have reports nowhere.
		if len(validation.IsDNS1035Label(r.Name)) == 0 && len(validation.IsDNS1123Label(r.Namespace)) == 0 {
			rejected = append(rejected, r)
		}
	})
	return out, rejected, err
}

// dropUnloadable leaves out the objects that fail snapshot's checks,
// recording each in s.Rejected under the service it belongs to: a tenant's
// Service the apiserver accepted but this tool cannot render must cost that
// export, not the cycle.
func dropUnloadable[T any, PT interface {
	*T
	GetName() string
	GetNamespace() string
	GetObjectKind() schema.ObjectKind
}](m *Member, s *snapshot.Snapshot, items []T, service func(PT) string) []T {
	kept := items[:0]
	for i := range items {
		o := PT(&items[i])
		err := snapshot.Validate(o)
		if err == nil {
			kept = append(kept, items[i])
			continue
		}
		kind := o.GetObjectKind().GroupVersionKind().Kind
		m.log().Warn("leaving out a "+kind+" that cannot be loaded; its export is reported Valid=False",
			"object", o.GetNamespace()+"/"+o.GetName(), "error", err)
		s.Rejected = append(s.Rejected, snapshot.Rejected{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(),
			Service: service(o), Message: err.Error()})
	}
	return kept
}

// loadThroughParse decodes listed objects with snapshot.Parse, which
// applies exactly the checks a committed inputs/<member>.yaml gets, so
// what is collected can always be loaded again. The apiserver's CRD
// validation can be looser (a name with dots, say, or a CRD older than
// this code): such an object is left out and logged when it is first
// seen. keep takes each object's one-object snapshot. An object listed
// with the same UID and resourceVersion as in the last read gets the
// last answer (see parseMemo).
func (m *Member) loadThroughParse(items []unstructured.Unstructured, some bool, apiVersion, kind string, keep func(*snapshot.Snapshot), reject func(*unstructured.Unstructured, error)) error {
	pass := m.parsed.begin(kind, some)
	for _, u := range items {
		k := parseKey{uid: string(u.GetUID()), resourceVersion: u.GetResourceVersion()}
		r, ok := pass.get(k)
		if !ok {
			u.SetManagedFields(nil)
			u.SetAPIVersion(apiVersion)
			u.SetKind(kind)
			js, err := u.MarshalJSON()
			if err != nil {
				return fmt.Errorf("%s %s/%s: %w", kind, u.GetNamespace(), u.GetName(), err)
			}
			r.one, r.err = snapshot.Parse(m.Name, kind, js)
			if r.err != nil {
				m.log().Warn("ignoring a "+kind+" that cannot be loaded",
					"object", u.GetNamespace()+"/"+u.GetName(), "error", r.err)
			}
		}
		pass.put(k, r)
		if r.err != nil {
			if reject != nil {
				reject(&u, r.err)
			}
			continue
		}
		keep(r.one)
	}
	pass.end()
	return nil
}

func (m *Member) readNamespaces(ctx context.Context) ([]corev1.Namespace, error) {
	list, err := m.typed.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Namespaces: %w", err)
	}
	for i := range list.Items {
		list.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
		list.Items[i].ManagedFields = nil
	}
	return list.Items, nil
}

// readServices reads only exported Services: one Get for a namespace with
// a single export, one namespace list filtered locally otherwise.
func (m *Member) readServices(ctx context.Context, exported map[string][]string) ([]corev1.Service, error) {
	return perNamespace(ctx, exported, func(ctx context.Context, ns string, names []string) ([]corev1.Service, error) {
		var items []corev1.Service
		if len(names) == 1 {
			svc, err := m.typed.CoreV1().Services(ns).Get(ctx, names[0], metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("reading Service %s/%s: %w", ns, names[0], err)
			}
			items = []corev1.Service{*svc}
		} else {
			list, err := m.typed.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing Services in %s: %w", ns, err)
			}
			for _, svc := range list.Items {
				if slices.Contains(names, svc.Name) {
					items = append(items, svc)
				}
			}
		}
		for i := range items {
			items[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
			items[i].ManagedFields = nil
		}
		return items, nil
	})
}

// readSlices reads the EndpointSlices of the exported Services by their
// kubernetes.io/service-name label, leaving out slices mcs-gitops applied.
func (m *Member) readSlices(ctx context.Context, services map[string][]string) ([]discoveryv1.EndpointSlice, error) {
	return perNamespace(ctx, services, func(ctx context.Context, ns string, names []string) ([]discoveryv1.EndpointSlice, error) {
		op, values := selection.In, names
		if len(names) > maxSelectorValues {
			op, values = selection.Exists, nil
		}
		req, err := labels.NewRequirement(discoveryv1.LabelServiceName, op, values)
		if err != nil {
			return nil, fmt.Errorf("EndpointSlice selector in %s: %w", ns, err)
		}
		list, err := m.typed.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
			LabelSelector: labels.NewSelector().Add(*req).String(),
		})
		if err != nil {
			return nil, fmt.Errorf("listing EndpointSlices in %s: %w", ns, err)
		}
		var items []discoveryv1.EndpointSlice
		for _, sl := range list.Items {
			if managedByUs(sl.Labels) || !slices.Contains(names, sl.Labels[discoveryv1.LabelServiceName]) {
				continue
			}
			sl.TypeMeta = metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"}
			sl.ManagedFields = nil
			items = append(items, sl)
		}
		return items, nil
	})
}

// readServiceCIDRs returns the member's ServiceCIDRs, which say the IP
// families it can serve. A member without the API (before Kubernetes
// 1.33), or whose ClusterRole predates this read, gives none: its
// families are then unknown, which is how earlier versions treated every
// member, rather than a failed read.
func (m *Member) readServiceCIDRs(ctx context.Context) ([]networkingv1.ServiceCIDR, error) {
	list, err := m.typed.NetworkingV1().ServiceCIDRs().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		m.log().Warn("cannot list ServiceCIDRs; the member's IP families are unknown (grant list on servicecidrs, see deploy/member-rbac)")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing ServiceCIDRs: %w", err)
	}
	var out []networkingv1.ServiceCIDR
	for _, sc := range list.Items {
		if err := snapshot.Validate(&sc); err != nil {
			m.log().Warn("ignoring a ServiceCIDR that cannot be loaded", "object", sc.Name, "error", err)
			continue
		}
		out = append(out, snapshot.NormalizeServiceCIDR(sc))
	}
	return out, nil
}

// readClusterID returns the value of the cluster.clusterset.k8s.io
// ClusterProperty; empty when the CRD or the object does not exist.
func (m *Member) readClusterID(ctx context.Context) (string, error) {
	u, err := m.dynamic.Resource(clusterPropertiesGVR).Get(ctx, snapshot.ClusterIDProperty, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading ClusterProperty %s: %w", snapshot.ClusterIDProperty, err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "value")
	if v == "" {
		m.log().Warn("ClusterProperty has an empty spec.value; using the member name as cluster ID", "clusterProperty", snapshot.ClusterIDProperty)
	}
	return v, nil
}

// perNamespace runs read for every namespace, a few at a time, and
// concatenates the results.
func perNamespace[T any](ctx context.Context, byNS map[string][]string, read func(context.Context, string, []string) ([]T, error)) ([]T, error) {
	namespaces := make([]string, 0, len(byNS))
	for ns := range byNS {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	results := make([][]T, len(namespaces))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(namespaceParallelism)
	for i, ns := range namespaces {
		g.Go(func() error {
			var err error
			results[i], err = read(gctx, ns, byNS[ns])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.Concat(results...), nil
}

func sortSnapshot(s *snapshot.Snapshot) {
	slices.SortFunc(s.Namespaces, func(a, b corev1.Namespace) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.ServiceExports, func(a, b mcsv1alpha1.ServiceExport) int { return cmpKey(a.Namespace, a.Name, b.Namespace, b.Name) })
	slices.SortFunc(s.Services, func(a, b corev1.Service) int { return cmpKey(a.Namespace, a.Name, b.Namespace, b.Name) })
	slices.SortFunc(s.EndpointSlices, func(a, b discoveryv1.EndpointSlice) int {
		return cmpKey(a.Namespace, a.Name, b.Namespace, b.Name)
	})
	slices.SortFunc(s.GlobalTrafficPolicies, func(a, b v1alpha1.GlobalTrafficPolicy) int {
		return cmpKey(a.Namespace, a.Name, b.Namespace, b.Name)
	})
}

func cmpKey(ans, an, bns, bn string) int {
	if c := strings.Compare(ans, bns); c != 0 {
		return c
	}
	return strings.Compare(an, bn)
}
