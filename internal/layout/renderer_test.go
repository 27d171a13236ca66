// SPDX-License-Identifier: Apache-2.0

package layout_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/fixtures"
	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// A Renderer that keeps what services rendered to gives, after any
// sequence of changes, exactly what a fresh render and Files give: every
// scenario archive (gateways, policies, families, conflicts, unloadable
// objects) goes through a chain of changes (an endpoint moving, a port
// changing, an export withdrawn or added, a namespace gone, gateway
// addresses moving, policies dropped) and back, each compared with a
// render from scratch. A changed member comes as a new parse, as the loop
// has it: every object a new pointer, most of them equal.
func TestRendererGivesWhatFilesGives(t *testing.T) {
	scenarios, err := fixtures.LoadScenarios(filepath.Join("..", "..", "fixtures"))
	require.NoError(t, err)
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			opts := render.Options{Committed: sc.Committed}
			r := &layout.Renderer{}
			var lastFiles map[string][]byte
			var lastReport *render.Report
			check := func(step string, snaps []*snapshot.Snapshot) {
				t.Helper()
				want, wantReport := fresh(t, sc.Config, snaps, opts)
				got, report, err := r.Render(sc.Config, snaps, opts)
				require.NoError(t, err, step)
				if diff := diffFiles(want, got); diff != "" {
					t.Fatalf("%s: the Renderer's files differ from a fresh render's:\n%s", step, diff)
				}
				require.Equal(t, wantReport, report, step)
				if lastFiles != nil {
					untouchedSame(t, step, r.Touched(), lastFiles, got, lastReport, report)
					changedCovers(t, step, r.Changed(), lastFiles, got)
				}
				lastFiles, lastReport = got, report
			}
			check("first render", sc.Snapshots)
			check("same again", sc.Snapshots)
			for _, v := range variants(t, sc.Snapshots) {
				check(v.name, v.snaps)
			}
			check("back to the start", sc.Snapshots)
		})
	}
}

// The same over a generated world, whose changes touch one service among
// many, with the config changing under the Renderer too.
func TestRendererOverAGeneratedWorld(t *testing.T) {
	cfg, snaps := generate.ClusterSet(generate.Params{Members: 4, Services: 60, ExportersPerService: 2, EndpointsPerExporter: 3, Seed: 5})
	r := &layout.Renderer{}
	check := func(step string, cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot) {
		t.Helper()
		want, _ := fresh(t, cfg, snaps, render.Options{})
		got, _, err := r.Render(cfg, snaps, render.Options{})
		require.NoError(t, err, step)
		if diff := diffFiles(want, got); diff != "" {
			t.Fatalf("%s:\n%s", step, diff)
		}
	}
	check("first", cfg, snaps)
	for _, v := range variants(t, snaps) {
		check(v.name, cfg, v.snaps)
	}
	created := *cfg
	created.Spec.Render.CreateMissingNamespaces = true
	check("config: create missing namespaces", &created, variants(t, snaps)[0].snaps)
	check("config back", cfg, snaps)
	held := render.Options{Held: map[render.ImportKey]bool{{Member: snaps[1].Member,
		Namespace: snaps[0].ServiceExports[0].Namespace, Name: snaps[0].ServiceExports[0].Name}: true}}
	want, _ := fresh(t, cfg, snaps, held)
	got, _, err := r.Render(cfg, snaps, held)
	require.NoError(t, err)
	require.Empty(t, diffFiles(want, got), "an import held by review")
}

func fresh(t *testing.T, cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot, opts render.Options) (map[string][]byte, *render.Report) {
	t.Helper()
	out, err := render.RenderWith(cfg, snaps, opts)
	require.NoError(t, err)
	files, err := layout.Files(out)
	require.NoError(t, err)
	return files, &out.Report
}

func diffFiles(want, got map[string][]byte) string {
	var out []string
	for p, b := range want {
		g, ok := got[p]
		switch {
		case !ok:
			out = append(out, "missing "+p)
		case string(g) != string(b):
			out = append(out, fmt.Sprintf("differs %s:\n--- want\n%s\n--- got\n%s", p, b, g))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			out = append(out, "extra "+p)
		}
	}
	if len(out) == 0 {
		return ""
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("... and %d more", len(out)-5))
	}
	return strings.Join(out, "\n")
}

type variant struct {
	name  string
	snaps []*snapshot.Snapshot
}

// variants are the snapshots with one change each, in one member, that
// member re-parsed as the loop would have it.
func variants(t *testing.T, snaps []*snapshot.Snapshot) []variant {
	var out []variant
	change := func(name string, m int, f func(s *snapshot.Snapshot) bool) {
		_, s, err := snapshot.Normalize(snaps[m], "changed.yaml")
		require.NoError(t, err)
		if !f(s) {
			return
		}
		next := slices.Clone(snaps)
		next[m] = s
		out = append(out, variant{name: fmt.Sprintf("%s in %s", name, s.Member), snaps: next})
	}
	for m := range snaps {
		change("an endpoint moves", m, func(s *snapshot.Snapshot) bool {
			for i := range s.EndpointSlices {
				if sl := &s.EndpointSlices[i]; len(sl.Endpoints) > 0 {
					if sl.AddressType == discoveryv1.AddressTypeIPv6 {
						sl.Endpoints[0].Addresses = []string{"fd00:ffff::1"}
					} else {
						sl.Endpoints[0].Addresses = []string{"10.255.255.1"}
					}
					return true
				}
			}
			return false
		})
		change("an endpoint goes not ready", m, func(s *snapshot.Snapshot) bool {
			for i := range s.EndpointSlices {
				if sl := &s.EndpointSlices[i]; len(sl.Endpoints) > 0 {
					sl.Endpoints = slices.Clone(sl.Endpoints)
					sl.Endpoints[0].Conditions.Ready = new(false)
					return true
				}
			}
			return false
		})
		change("a port changes", m, func(s *snapshot.Snapshot) bool {
			for i := range s.Services {
				if ports := s.Services[i].Spec.Ports; len(ports) > 0 {
					s.Services[i].Spec.Ports = slices.Clone(ports)
					s.Services[i].Spec.Ports[0].Port++
					return true
				}
			}
			return false
		})
		change("an export is withdrawn", m, func(s *snapshot.Snapshot) bool {
			if len(s.ServiceExports) == 0 {
				return false
			}
			s.ServiceExports = s.ServiceExports[1:]
			return true
		})
		change("a service is added", m, func(s *snapshot.Snapshot) bool {
			if len(s.ServiceExports) == 0 {
				return false
			}
			se := s.ServiceExports[0].DeepCopy()
			const name = "zz-added"
			se.Name = name
			s.ServiceExports = append(s.ServiceExports, *se)
			for _, svc := range s.Services {
				if svc.Namespace == se.Namespace && svc.Name == s.ServiceExports[0].Name {
					c := svc.DeepCopy()
					c.Name = name
					s.Services = append(s.Services, *c)
				}
			}
			for _, sl := range s.EndpointSlices {
				if sl.Namespace == se.Namespace && sl.Labels[discoveryv1.LabelServiceName] == s.ServiceExports[0].Name {
					c := sl.DeepCopy()
					c.Name = name + "-" + c.Name
					c.Labels = maps.Clone(c.Labels)
					c.Labels[discoveryv1.LabelServiceName] = name
					s.EndpointSlices = append(s.EndpointSlices, *c)
				}
			}
			return true
		})
		change("a namespace is deleted", m, func(s *snapshot.Snapshot) bool {
			if len(s.Namespaces) == 0 {
				return false
			}
			s.Namespaces = slices.Clone(s.Namespaces)
			s.Namespaces[0].Status.Phase = corev1.NamespaceTerminating
			return true
		})
		change("gateway addresses move", m, func(s *snapshot.Snapshot) bool {
			if len(s.GatewayAddresses) == 0 {
				return false
			}
			s.GatewayAddresses = []string{"192.0.2.77"}
			return true
		})
		change("policies are dropped", m, func(s *snapshot.Snapshot) bool {
			if len(s.GlobalTrafficPolicies) == 0 {
				return false
			}
			s.GlobalTrafficPolicies = nil
			return true
		})
		change("nothing changes but the parse", m, func(*snapshot.Snapshot) bool { return true })
	}
	return out
}

// What makes a change cheap: after one endpoint moved, only the files of
// the service it belongs to are new; every other file is the bytes of the
// last call, not a copy (what Git's hashing of unchanged files relies on).
func TestRendererRendersOnlyWhatChanged(t *testing.T) {
	cfg, snaps := generate.ClusterSet(generate.Params{Members: 3, Services: 40, ExportersPerService: 2, EndpointsPerExporter: 3, Seed: 9})
	for i, s := range snaps { // as the loop has them
		_, n, err := snapshot.Normalize(s, "read.yaml")
		require.NoError(t, err)
		snaps[i] = n
	}
	r := &layout.Renderer{}
	before, _, err := r.Render(cfg, snaps, render.Options{})
	require.NoError(t, err)
	moved := variants(t, snaps)[0].snaps
	after, _, err := r.Render(cfg, moved, render.Options{})
	require.NoError(t, err)
	var sl *discoveryv1.EndpointSlice
	for m := range moved {
		if moved[m] != snaps[m] {
			sl = &moved[m].EndpointSlices[0]
		}
	}
	service := sl.Namespace + "/" + sl.Labels[discoveryv1.LabelServiceName] + "/"
	var fresh, kept []string
	for p, b := range after {
		if len(b) > 0 && len(before[p]) > 0 && &b[0] == &before[p][0] {
			kept = append(kept, p)
			continue
		}
		fresh = append(fresh, p)
	}
	require.NotEmpty(t, kept)
	for _, p := range fresh {
		if p == layout.SummaryFile || p == layout.ServiceStatusFile(sl.Namespace, sl.Labels[discoveryv1.LabelServiceName]) {
			continue
		}
		require.Contains(t, p, "/"+service, "%s was rendered again, but only %s changed", p, service)
	}
	for _, p := range kept {
		require.NotContains(t, p, "/"+service+"endpointslice-", "a slice of the service whose endpoint moved was kept")
	}
}

// ReadCommittedAfter gives what ReadCommitted gives for a tree that
// changed only at the paths it is told: a report changed, one gone, one
// new, a member's snapshot part changed.
func TestReadCommittedAfterGivesReadCommitted(t *testing.T) {
	cfg, snaps := generate.ClusterSet(generate.Params{Members: 3, Services: 20, ExportersPerService: 2, EndpointsPerExporter: 2, Seed: 3})
	tree := func(snaps []*snapshot.Snapshot) map[string][]byte {
		files, _ := fresh(t, cfg, snaps, render.Options{})
		for _, s := range snaps {
			b, err := snapshot.Format(s)
			require.NoError(t, err)
			parts, err := layout.InputFiles(s.Member, b)
			require.NoError(t, err)
			maps.Copy(files, parts)
		}
		return files
	}
	before := tree(snaps)
	prev, err := layout.ReadCommitted(before)
	require.NoError(t, err)

	after := tree(variants(t, snaps)[0].snaps) // an endpoint moves
	var status []string
	for p := range after {
		if strings.HasPrefix(p, layout.StatusDir+"/") && strings.Count(p, "/") == 2 && p != layout.GatewaysFile {
			status = append(status, p)
		}
	}
	sort.Strings(status)
	gone, renamed := status[0], strings.Replace(status[1], ".yaml", "-new.yaml", 1)
	delete(after, gone)
	report, err := layout.ParseServiceReport(after[status[1]])
	require.NoError(t, err)
	report.Name += "-new"
	after[renamed], err = yamlOf(report)
	require.NoError(t, err)
	changed := map[string]bool{}
	for p := range before {
		if string(before[p]) != string(after[p]) {
			changed[p] = true
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			changed[p] = true
		}
	}
	want, err := layout.ReadCommitted(after)
	require.NoError(t, err)
	got, err := layout.ReadCommittedAfter(prev, after, changed, layout.JoinInputs(after))
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func yamlOf(v any) ([]byte, error) { return sigsyaml.Marshal(v) }

// untouchedSame checks Touched's promise: a member it leaves out holds the
// same files as before and the same exports and policies in the report.
func untouchedSame(t *testing.T, step string, touched map[string]bool, before, after map[string][]byte, was, is *render.Report) {
	t.Helper()
	member := func(p string) string {
		rest, ok := strings.CutPrefix(p, layout.ClustersDir+"/")
		if !ok {
			return ""
		}
		m, _, _ := strings.Cut(rest, "/")
		return m
	}
	for _, files := range []map[string][]byte{before, after} {
		for p := range files {
			if m := member(p); m != "" && !touched[m] && string(before[p]) != string(after[p]) {
				t.Fatalf("%s: %s changed, but Touched leaves %s out", step, p, m)
			}
		}
	}
	parts := func(r *render.Report, m string) []string {
		var out []string
		for _, s := range r.Services {
			for _, e := range s.Exports {
				if e.Member == m {
					out = append(out, fmt.Sprintf("%s/%s %v", s.Namespace, s.Name, e))
				}
			}
			for _, p := range s.Policies {
				if p.Member == m {
					out = append(out, fmt.Sprintf("%s/%s %v", s.Namespace, s.Name, p))
				}
			}
		}
		return out
	}
	for _, s := range append(slices.Clone(was.Services), is.Services...) {
		for _, e := range s.Exports {
			if !touched[e.Member] {
				require.Equal(t, parts(was, e.Member), parts(is, e.Member), "%s: the report of %s's exports changed, but Touched leaves it out", step, e.Member)
			}
		}
	}
}

// changedCovers checks Changed's promise: every path at which two calls'
// files differ is among it (unless it is nil: anything may differ).
func changedCovers(t *testing.T, step string, changed []string, before, after map[string][]byte) {
	t.Helper()
	if changed == nil {
		return
	}
	in := map[string]bool{}
	for _, p := range changed {
		in[p] = true
	}
	for _, files := range []map[string][]byte{before, after} {
		for p := range files {
			b, hadBefore := before[p]
			a, hasAfter := after[p]
			if (hadBefore != hasAfter || string(a) != string(b)) && !in[p] {
				t.Fatalf("%s: %s differs from the last call, but Changed leaves it out", step, p)
			}
		}
	}
}
