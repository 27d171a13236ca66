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
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
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
// unchanged world changes no resourceVersion. The imports and derived
// Services this apply created (created) are not read again: the member's
// answer to the create is what it holds.
func (a *Applier) writeImports(ctx context.Context, desired []desiredObject, applied map[objKey]bool, created map[objKey]*unstructured.Unstructured, report *render.Report, res *Result) error {
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
		k := d.key
		if k.GroupKind != serviceImportGK || !applied[k] {
			continue
		}
		jobs = append(jobs, func(ctx context.Context) error {
			// One read of the live import serves both writes: they touch
			// different fields through different managers. An import this
			// apply created is as the member answered then.
			live, err := a.live(ctx, d.obj.GroupVersionKind(), k, created)
			if err != nil {
				if a.StatusOnly && apierrors.IsNotFound(err) {
					a.log().Info("import not applied yet by the member's applier; its status waits for the next cycle", "import", describe(d.obj))
					return nil
				}
				return fmt.Errorf("status of %s: %w", describe(d.obj), err)
			}
			a.importChangeEvent(live, k.Namespace+"/"+k.Name)
			live, ipsErr := a.writeImportIPs(ctx, d.obj, live, applied, created, note)
			return errors.Join(ipsErr, a.writeImportStatus(ctx, d, live, importReady(d.obj, notServed[k.Namespace+"/"+k.Name], partial[k.Namespace+"/"+k.Name]), note))
		})
	}
	return runStatusJobs(ctx, jobs, &written, res)
}

// writeReport writes the conditions of this member's ServiceExports and the
// status of its GlobalTrafficPolicies from report (nil: nothing).
//
// With a Memory and the member's snapshot (inputs), only the services
// whose key (reportKeys) differs from what the last write-back that
// completed left them at are due, and those whose reach the commit
// changed (their exports' ReachChanged events): the others' exports are
// the same objects (their creation times are in the snapshot) and were
// given this status then. Someone else changing that status is drift,
// repaired when the memory ages out, like an edited imported object.
// One change in a member of 1,000 exports then reads and writes one
// export, not a list of all of them. The live objects are read with one
// list per kind when many are due (listAtLeast), one read each when few.
func (a *Applier) writeReport(ctx context.Context, report *render.Report, res *Result) error {
	if report == nil {
		return nil
	}
	keys, keyed := a.reportKeys(report)
	var due map[string]bool // nil: every service
	if keyed {
		due = a.Memory.reportDue(keys)
		for _, s := range report.Services {
			if c := a.changeOf(s.Namespace + "/" + s.Name); c != nil && len(c.Gained)+len(c.Lost) > 0 {
				due[s.Namespace+"/"+s.Name] = true
			}
		}
		if len(due) == 0 {
			a.log().Debug("export and policy status as last written; not read")
			return nil
		}
	}
	if err := a.writeReportNow(ctx, report, due, res); err != nil {
		return err
	}
	if keyed {
		a.Memory.reportDone(keys)
	}
	return nil
}

// reportKeys digests, for each service with an export or policy of this
// member, what their status is a function of: the service's part of the
// member's snapshot (the whole snapshot when the tree has no parts) and
// its part of the report. Without the snapshot there are no keys.
func (a *Applier) reportKeys(report *render.Report) (map[string][32]byte, bool) {
	if a.Memory == nil || a.inputs == nil {
		return nil, false
	}
	type part struct {
		Exports  []render.ExportReport
		Policies []render.PolicyReport
	}
	keys := map[string][32]byte{}
	for _, s := range report.Services {
		var p part
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
		if p.Exports == nil && p.Policies == nil {
			continue
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, false
		}
		key := s.Namespace + "/" + s.Name
		h := sha256.New()
		h.Write(a.inputPart(key))
		h.Write([]byte{0})
		h.Write(b)
		var k [32]byte
		h.Sum(k[:0])
		keys[key] = k
	}
	return keys, true
}

// inputPart is the part of the member's snapshot that holds service key,
// or the whole snapshot when the apply was given no parts.
func (a *Applier) inputPart(key string) []byte {
	if b, ok := a.inputParts[layout.InputDir(a.Member)+key+".yaml"]; ok {
		return b
	}
	return a.inputs
}

// writeReportNow writes the status of the services due (nil: all).
func (a *Applier) writeReportNow(ctx context.Context, report *render.Report, due map[string]bool, res *Result) error {
	var exportKeys, policyKeys []string
	for _, s := range report.Services {
		key := s.Namespace + "/" + s.Name
		if due != nil && !due[key] {
			continue
		}
		if slices.ContainsFunc(s.Exports, func(e render.ExportReport) bool { return e.Member == a.Member }) {
			exportKeys = append(exportKeys, key)
		}
		if slices.ContainsFunc(s.Policies, func(p render.PolicyReport) bool { return p.Member == a.Member }) {
			policyKeys = append(policyKeys, key)
		}
	}
	liveExports, err := a.readLive(ctx, serviceExportGVK, exportKeys, due == nil)
	if err != nil {
		return fmt.Errorf("status of ServiceExports: %w", err)
	}
	livePolicies, err := a.readLive(ctx, policyGVK, policyKeys, due == nil)
	if err != nil && !meta.IsNoMatchError(err) {
		return fmt.Errorf("status of %ss: %w", v1alpha1.GlobalTrafficPolicyKind, err)
	}
	var jobs []statusJob
	var mu collector
	var written []string
	note := func(s string) { mu.add(&written, s) }
	for _, s := range report.Services {
		key := s.Namespace + "/" + s.Name
		if due != nil && !due[key] {
			continue
		}
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

// readLive reads the live objects of gvk named by keys ("namespace/name"):
// one list when many are wanted (or list is set), one read each when few;
// an object that does not exist is left out.
func (a *Applier) readLive(ctx context.Context, gvk schema.GroupVersionKind, keys []string, list bool) (map[string]*unstructured.Unstructured, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if list || len(keys) >= listAtLeast {
		return a.listLive(ctx, gvk)
	}
	out := make(map[string]*unstructured.Unstructured, len(keys))
	var mu sync.Mutex
	errs := forEach(ctx, len(keys), func(ctx context.Context, i int) error {
		ns, name, _ := strings.Cut(keys[i], "/")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		switch err := a.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		mu.Lock()
		out[keys[i]] = u
		mu.Unlock()
		return nil
	})
	return out, errors.Join(errs...)
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
