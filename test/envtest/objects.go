// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// LoadObjects reads a kubectl-style file (documents or a List, e.g. a
// snapshot from fixtures/) and clears what a server assigns (uid,
// resourceVersion, cluster IPs other than None, status), so the objects
// can be created anew the way their owners made them. Namespaces come
// first.
func LoadObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split("\n"+string(data), "\n---") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		items := []map[string]any{m}
		if m["kind"] == "List" {
			items = nil
			list, _ := m["items"].([]any)
			for _, it := range list {
				if obj, ok := it.(map[string]any); ok {
					items = append(items, obj)
				}
			}
		}
		for _, obj := range items {
			out = append(out, fresh(&unstructured.Unstructured{Object: obj}))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetKind() == "Namespace" && out[j].GetKind() != "Namespace" })
	return out, nil
}

func fresh(u *unstructured.Unstructured) *unstructured.Unstructured {
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "ownerReferences"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	if ip, _, _ := unstructured.NestedString(u.Object, "spec", "clusterIP"); u.GetKind() == "Service" && ip != "None" {
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	}
	return u
}

// CreateObjects creates objs in the cluster. Kinds the cluster does not
// serve (a ClusterProperty without the about-api CRD) are skipped and
// returned; objects that already exist are left alone.
func (c *Cluster) CreateObjects(ctx context.Context, objs []*unstructured.Unstructured) (skipped []string, err error) {
	for _, o := range objs {
		err := c.Client.Create(ctx, o.DeepCopy())
		switch {
		case meta.IsNoMatchError(err):
			skipped = append(skipped, o.GetKind()+" "+o.GetName())
		case client.IgnoreAlreadyExists(err) != nil:
			return skipped, fmt.Errorf("cluster %q: create %s %s/%s: %w", c.Name, o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return skipped, nil
}

// ListenerNames are the names of a Gateway's spec.listeners, sorted: what
// tests compare to see whose listeners a Gateway holds.
func ListenerNames(gw *unstructured.Unstructured) []string {
	ls, _, _ := unstructured.NestedSlice(gw.Object, "spec", "listeners")
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		if m, ok := l.(map[string]any); ok {
			if name, ok := m["name"].(string); ok {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}
