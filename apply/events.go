// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
)

// Events receives what a user should see with `kubectl describe` on an
// export, import or policy: client-go's events.EventRecorder has this
// method. Events are emitted only when what they say changes, so an
// unchanged world emits none.
type Events interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// eventAction is the Event's action: what mcs-gitops was doing.
const eventAction = "Sync"

// maxNote keeps an Event's note under the API's 1 kB limit.
const maxNote = 900

func (a *Applier) event(obj *unstructured.Unstructured, typ, reason, note string) {
	if a.Events == nil {
		return
	}
	if a.Commit != "" {
		note += " (commit " + short(a.Commit) + ")"
	}
	if len(note) > maxNote {
		note = note[:maxNote] + "…"
	}
	a.Events.Eventf(obj, nil, typ, reason, eventAction, "%s", note)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// exportEvents tells the story of an export's conditions: Exported when it
// becomes valid and free of conflict, Conflict and Invalid when those
// start or their reason changes.
func (a *Applier) exportEvents(live *unstructured.Unstructured, have, want []metav1.Condition) {
	was, now := condMap(have), condMap(want)
	changed := func(t string) bool {
		w, ok := was[t]
		n := now[t]
		return !ok || w.Status != n.Status || w.Reason != n.Reason
	}
	switch valid, conflict := now["Valid"], now["Conflict"]; {
	case valid.Status == metav1.ConditionFalse && changed("Valid"):
		a.event(live, corev1.EventTypeWarning, "Invalid", valid.Message)
	case conflict.Status == metav1.ConditionTrue && changed("Conflict"):
		a.event(live, corev1.EventTypeWarning, "Conflict", conflict.Reason+": "+conflict.Message)
	case valid.Status == metav1.ConditionTrue && conflict.Status != metav1.ConditionTrue &&
		(changed("Valid") || was["Conflict"].Status == metav1.ConditionTrue):
		a.event(live, corev1.EventTypeNormal, "Exported", "exported to the ClusterSet")
	}
}

func condMap(cs []metav1.Condition) map[string]metav1.Condition {
	m := make(map[string]metav1.Condition, len(cs))
	for _, c := range cs {
		m[c.Type] = c
	}
	return m
}

// importEvents: Imported when an import first has sources, SourcesChanged
// when the clusters it imports from change.
func (a *Applier) importEvents(live *unstructured.Unstructured, have, want []any) {
	was, now := clusterNames(have), clusterNames(want)
	switch {
	case len(now) == 0 || slices.Equal(was, now):
	case len(was) == 0:
		a.event(live, corev1.EventTypeNormal, "Imported", "imported from "+strings.Join(now, ", "))
	default:
		a.event(live, corev1.EventTypeNormal, "SourcesChanged",
			fmt.Sprintf("imported from %s (was %s)", strings.Join(now, ", "), strings.Join(was, ", ")))
	}
}

func clusterNames(cs []any) []string {
	var out []string
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			if n, ok := m["cluster"].(string); ok {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// policyEvents: Applied when the policy's Applied condition turns true,
// Rerouted when the cluster its traffic goes to first changes.
func (a *Applier) policyEvents(live *unstructured.Unstructured, have, want []metav1.Condition, wasClusters, nowClusters []string) {
	was, now := condMap(have), condMap(want)
	if n := now["Applied"]; n.Status == metav1.ConditionTrue && was["Applied"].Status != metav1.ConditionTrue {
		a.event(live, corev1.EventTypeNormal, "Applied", "routing to "+strings.Join(nowClusters, ", "))
		return
	}
	if len(wasClusters) > 0 && len(nowClusters) > 0 && wasClusters[0] != nowClusters[0] {
		a.event(live, corev1.EventTypeNormal, "Rerouted",
			fmt.Sprintf("traffic now goes to %s first (was %s)", nowClusters[0], wasClusters[0]))
	}
}

// changeOf is what the commit changed of the service key (namespace/name),
// nil when nothing or when the applier was not told (a.Change).
func (a *Applier) changeOf(key string) *change.Service {
	if a.Change == nil {
		return nil
	}
	ss := a.Change.Services
	i, ok := slices.BinarySearchFunc(ss, key, func(s change.Service, k string) int { return strings.Compare(s.Key(), k) })
	if !ok {
		return nil
	}
	return &ss[i]
}

// reachEvent tells an export's owner who starts or stops reaching the
// service: ReachChanged, worded from the change model.
func (a *Applier) reachEvent(live *unstructured.Unstructured, key string) {
	c := a.changeOf(key)
	if c == nil {
		return
	}
	// The exporter's own import goes without saying.
	others := func(ms []string) []string {
		return slices.DeleteFunc(slices.Clone(ms), func(m string) bool { return m == a.Member })
	}
	var parts []string
	if g := others(c.Gained); len(g) > 0 {
		parts = append(parts, "now reachable from "+strings.Join(g, ", "))
	}
	if l := others(c.Lost); len(l) > 0 {
		parts = append(parts, "no longer reachable from "+strings.Join(l, ", "))
	}
	if len(parts) > 0 {
		a.event(live, corev1.EventTypeNormal, "ReachChanged", strings.Join(parts, "; "))
	}
}

// importChangeEvent tells an importer how the merged import changed:
// ImportChanged with each field old -> new, worded from the change model.
func (a *Applier) importChangeEvent(live *unstructured.Unstructured, key string) {
	c := a.changeOf(key)
	if c == nil || len(c.Fields) == 0 || slices.Contains(c.Gained, a.Member) {
		return
	}
	lines := make([]string, 0, len(c.Fields))
	for _, f := range c.Fields {
		lines = append(lines, f.String())
	}
	a.event(live, corev1.EventTypeNormal, "ImportChanged", strings.Join(lines, "; "))
}
