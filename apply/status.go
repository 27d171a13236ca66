// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

var (
	serviceImportGK = schema.GroupKind{Group: "multicluster.x-k8s.io", Kind: "ServiceImport"}
	// serviceExportGVK is the version export status is written in; both
	// served versions share the condition schema.
	serviceExportGVK = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceExport"}
)

// writeImports writes the ServiceImports' status.clusters and spec.ips
// for the imports that were applied (not collisions, not refused). Every
// write is skipped when the cluster already holds the same values, so an
// unchanged world changes no resourceVersion.
func (a *Applier) writeImports(ctx context.Context, desired []desiredObject, applied map[objKey]bool, report *render.Report, res *Result) error {
	notServed := map[string]render.NotServed{}
	partial := map[string][]render.PartialPort{}
	if report != nil {
		for _, s := range report.Services {
			for _, n := range s.NotServed {
				if n.Member == a.Member {
					notServed[s.Namespace+"/"+s.Name] = n
				}
			}
			if len(s.PartialPorts) > 0 {
				partial[s.Namespace+"/"+s.Name] = s.PartialPorts
			}
		}
	}
	var jobs []statusJob
	var mu collector
	var written []string
	note := func(s string) { mu.add(&written, s) }
	for _, d := range desired {
		k := keyOf(d.obj)
		if k.GroupKind != serviceImportGK || !applied[k] {
			continue
		}
		jobs = append(jobs, func(ctx context.Context) error {
			// One read of the live import serves both writes: they touch
			// different fields through different managers.
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(d.obj.GroupVersionKind())
			if err := a.Client.Get(ctx, client.ObjectKeyFromObject(d.obj), live); err != nil {
				if a.StatusOnly && apierrors.IsNotFound(err) {
					a.log().Info("import not applied yet by the member's applier; its status waits for the next cycle", "import", describe(d.obj))
					return nil
				}
				return fmt.Errorf("status of %s: %w", describe(d.obj), err)
			}
			a.importChangeEvent(live, k.Namespace+"/"+k.Name)
			live, ipsErr := a.writeImportIPs(ctx, d.obj, live, applied, note)
			return errors.Join(ipsErr, a.writeImportStatus(ctx, d, live, importReady(d.obj, notServed[k.Namespace+"/"+k.Name], partial[k.Namespace+"/"+k.Name]), note))
		})
	}
	return runStatusJobs(ctx, jobs, &written, res)
}

// writeReport writes the conditions of this member's ServiceExports and the
// status of its GlobalTrafficPolicies from report (nil: nothing). The live
// objects are read with one list per kind, not one read each, so an
// unchanged world costs two requests per member whatever its size.
//
// With a Memory and the member's snapshot (inputs), the lists are skipped
// when the last write-back that completed had the same snapshot and the
// same status for this member's exports and policies: the exports are
// the same objects (their creation times are in the snapshot) and were
// given this status then. Someone else changing that status is drift,
// repaired when the memory ages out, like an edited imported object.
func (a *Applier) writeReport(ctx context.Context, report *render.Report, res *Result) error {
	if report == nil {
		return nil
	}
	key, keyed := a.reportKey(report)
	if keyed && a.Memory.reportedAlready(key) {
		a.log().Debug("export and policy status as last written; not listed")
		return nil
	}
	if err := a.writeReportNow(ctx, report, res); err != nil {
		return err
	}
	if keyed {
		a.Memory.reportDone(key)
	}
	return nil
}

// reportKey digests what the member's export and policy status is a
// function of: its snapshot and its part of the report. Without the
// snapshot there is no key.
func (a *Applier) reportKey(report *render.Report) ([32]byte, bool) {
	if a.Memory == nil || a.inputs == nil {
		return [32]byte{}, false
	}
	type part struct {
		Service  string
		Exports  []render.ExportReport
		Policies []render.PolicyReport
	}
	var parts []part
	for _, s := range report.Services {
		p := part{Service: s.Namespace + "/" + s.Name}
		for _, e := range s.Exports {
			if e.Member == a.Member {
				p.Exports = append(p.Exports, e)
			}
		}
		for _, pr := range s.Policies {
			if pr.Member == a.Member {
				p.Policies = append(p.Policies, pr)
			}
		}
		if p.Exports != nil || p.Policies != nil {
			parts = append(parts, p)
		}
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return [32]byte{}, false
	}
	h := sha256.New()
	h.Write(a.inputs)
	h.Write([]byte{0})
	h.Write(b)
	var key [32]byte
	h.Sum(key[:0])
	return key, true
}

func (a *Applier) writeReportNow(ctx context.Context, report *render.Report, res *Result) error {
	var exports, policies bool
	for _, s := range report.Services {
		exports = exports || slices.ContainsFunc(s.Exports, func(e render.ExportReport) bool { return e.Member == a.Member })
		policies = policies || slices.ContainsFunc(s.Policies, func(p render.PolicyReport) bool { return p.Member == a.Member })
	}
	var liveExports, livePolicies map[string]*unstructured.Unstructured
	var err error
	if exports {
		if liveExports, err = a.listLive(ctx, serviceExportGVK); err != nil {
			return fmt.Errorf("status of ServiceExports: %w", err)
		}
	}
	if policies {
		if livePolicies, err = a.listLive(ctx, policyGVK); err != nil && !meta.IsNoMatchError(err) {
			return fmt.Errorf("status of %ss: %w", v1alpha1.GlobalTrafficPolicyKind, err)
		}
	}
	var jobs []statusJob
	var mu collector
	var written []string
	note := func(s string) { mu.add(&written, s) }
	for _, s := range report.Services {
		key := s.Namespace + "/" + s.Name
		for _, e := range s.Exports {
			if e.Member != a.Member {
				continue
			}
			live := liveExports[key]
			if live == nil {
				a.log().Debug("export gone since the snapshot; no status to write", "object", "ServiceExport/"+key)
				continue
			}
			a.reachEvent(live, key)
			jobs = append(jobs, func(ctx context.Context) error {
				return a.writeExportStatus(ctx, live, e.Conditions, note)
			})
		}
		for _, p := range s.Policies {
			if p.Member != a.Member {
				continue
			}
			live := livePolicies[key]
			if live == nil {
				a.log().Debug("policy gone since the snapshot; no status to write", "object", v1alpha1.GlobalTrafficPolicyKind+"/"+key)
				continue
			}
			jobs = append(jobs, func(ctx context.Context) error {
				return a.writePolicyStatus(ctx, live, p, note)
			})
		}
	}
	return runStatusJobs(ctx, jobs, &written, res)
}

// listLive lists every object of gvk in the member by "namespace/name".
func (a *Applier) listLive(ctx context.Context, gvk schema.GroupVersionKind) (map[string]*unstructured.Unstructured, error) {
	out := map[string]*unstructured.Unstructured{}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	err := a.listPaged(ctx, l, func() {
		for _, o := range l.Items {
			out[o.GetNamespace()+"/"+o.GetName()] = &o
		}
	})
	return out, err
}

type statusJob func(ctx context.Context) error

func runStatusJobs(ctx context.Context, jobs []statusJob, written *[]string, res *Result) error {
	errs := forEach(ctx, len(jobs), func(ctx context.Context, i int) error { return jobs[i](ctx) })
	slices.Sort(*written)
	res.StatusWritten = append(res.StatusWritten, *written...)
	return errors.Join(errs...)
}

func (a *Applier) applyStatus(ctx context.Context, u *unstructured.Unstructured) error {
	return a.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(StatusFieldManager), client.ForceOwnership)
}

// skeleton is an apply configuration naming the object and nothing else.
func skeleton(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// writeImportStatus sets status.clusters to what was rendered; live is the
// import as the member holds it.
func (a *Applier) writeImportStatus(ctx context.Context, d desiredObject, live *unstructured.Unstructured, ready *render.Condition, note func(string)) error {
	want, _ := d.status["clusters"].([]any)
	have, _, _ := unstructured.NestedSlice(live.Object, "status", "clusters")
	clustersOK := len(want) == 0 && len(have) == 0 || reflect.DeepEqual(want, have)
	var conds []metav1.Condition
	condsOK := true
	if ready != nil {
		var haveConds []metav1.Condition
		if raw, ok, _ := unstructured.NestedSlice(live.Object, "status", "conditions"); ok {
			if err := fromUnstructured(raw, &haveConds); err != nil {
				return fmt.Errorf("status of %s: reading conditions: %w", describe(d.obj), err)
			}
		}
		conds = apiConditions([]render.Condition{*ready}, haveConds, live.GetGeneration(), a.transitionTime())
		condsOK = len(haveConds) == len(conds) && conditionsPresent(conds, haveConds)
	}
	if clustersOK && condsOK {
		return nil
	}
	u := skeleton(d.obj.GroupVersionKind(), d.obj.GetNamespace(), d.obj.GetName())
	st := map[string]any{}
	if len(want) > 0 {
		st["clusters"] = want
	}
	if conds != nil {
		list, err := toUnstructured(conds)
		if err != nil {
			return fmt.Errorf("status of %s: %w", describe(d.obj), err)
		}
		st["conditions"] = list
	}
	if len(st) > 0 {
		u.Object["status"] = st
	}
	if err := a.applyStatus(ctx, u); err != nil {
		return fmt.Errorf("status of %s: %w", describe(d.obj), err)
	}
	a.importEvents(live, have, want)
	note(describe(d.obj) + " status")
	return nil
}

// importReady is the Ready condition of a v1beta1 ServiceImport, the
// version that has conditions: True once applied, False with the
// renderer's reason where the member cannot serve the import's IP
// families. A port served in fewer families than this member's import
// stays True (the others answer) and the message names it. nil for
// v1alpha1.
func importReady(si *unstructured.Unstructured, n render.NotServed, partial []render.PartialPort) *render.Condition {
	if si.GroupVersionKind().Version != "v1beta1" {
		return nil
	}
	if n.Member != "" {
		return &render.Condition{Type: "Ready", Status: "False", Reason: n.Reason, Message: n.Message}
	}
	fams, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ipFamilies")
	return &render.Condition{Type: "Ready", Status: "True", Reason: "Ready",
		Message: "the ServiceImport and its derived Service are applied" + render.PartialPortsNote(partial, fams)}
}

// writeExportStatus sets the rendered conditions on one ServiceExport of
// this member (live, as listed), keeping lastTransitionTime for a
// condition whose status did not change.
func (a *Applier) writeExportStatus(ctx context.Context, live *unstructured.Unstructured, conds []render.Condition, note func(string)) error {
	ns, name := live.GetNamespace(), live.GetName()
	id := "ServiceExport/" + ns + "/" + name
	var have []metav1.Condition
	if raw, ok, _ := unstructured.NestedSlice(live.Object, "status", "conditions"); ok {
		if err := fromUnstructured(raw, &have); err != nil {
			return fmt.Errorf("status of %s: reading conditions: %w", id, err)
		}
	}
	want := apiConditions(conds, have, live.GetGeneration(), a.transitionTime())
	if conditionsPresent(want, have) {
		return nil
	}
	list, err := toUnstructured(want)
	if err != nil {
		return fmt.Errorf("status of %s: %w", id, err)
	}
	u := skeleton(serviceExportGVK, ns, name)
	u.Object["status"] = map[string]any{"conditions": list}
	if err := a.applyStatus(ctx, u); err != nil {
		if apierrors.IsNotFound(err) {
			a.log().Debug("export deleted since it was listed; no status to write", "object", id)
			return nil
		}
		return fmt.Errorf("status of %s: %w", id, err)
	}
	a.exportEvents(live, have, want)
	note(id + " status")
	return nil
}

// apiConditions turns rendered conditions into API conditions. A
// condition whose status is unchanged keeps its lastTransitionTime.
func apiConditions(conds []render.Condition, have []metav1.Condition, generation int64, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(conds))
	for _, c := range conds {
		mc := metav1.Condition{
			Type: c.Type, Status: metav1.ConditionStatus(c.Status), Reason: c.Reason, Message: c.Message,
			ObservedGeneration: generation, LastTransitionTime: now,
		}
		for _, h := range have {
			if h.Type == c.Type && h.Status == mc.Status && !h.LastTransitionTime.IsZero() {
				mc.LastTransitionTime = h.LastTransitionTime
			}
		}
		out = append(out, mc)
	}
	return out
}

// transitionTime stamps a condition that changed status, to the second as
// the API stores it.
func (a *Applier) transitionTime() metav1.Time {
	return metav1.NewTime(a.now().UTC().Truncate(time.Second))
}

// conditionsPresent reports whether every wanted condition is in have
// exactly (transition times compared to the second, as the API stores them).
func conditionsPresent(want, have []metav1.Condition) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h.Type == w.Type && h.Status == w.Status && h.Reason == w.Reason && h.Message == w.Message &&
				h.ObservedGeneration == w.ObservedGeneration && h.LastTransitionTime.Unix() == w.LastTransitionTime.Unix() {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func fromUnstructured(in any, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

func toUnstructured(in any) ([]any, error) {
	var out []any
	return out, fromUnstructured(in, &out)
}
