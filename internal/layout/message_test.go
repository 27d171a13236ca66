// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/render"
)

func cond(t, status, reason, msg string) render.Condition {
	return render.Condition{Type: t, Status: status, Reason: reason, Message: msg}
}

func export(member string, conflict string) render.ExportReport {
	c := cond("Conflict", "False", "NoConflicts", "")
	if conflict != "" {
		c = cond("Conflict", "True", conflict, "ports differ from cluster-1's export; cluster-1 wins")
	}
	return render.ExportReport{Member: member, ClusterID: member, Conditions: []render.Condition{
		cond("Valid", "True", "Valid", ""), c, cond("Ready", "True", "Exported", ""),
	}}
}

func TestMessageImportAndConflict(t *testing.T) {
	prev := &render.Report{Services: []render.ServiceReport{
		{Namespace: "web", Name: "api", Type: "ClusterSetIP", Exports: []render.ExportReport{export("cluster-1", "")},
			ImportedBy: []string{"cluster-1", "cluster-2"}, Endpoints: map[string]int{"cluster-1": 2}},
	}}
	next := &render.Report{Services: []render.ServiceReport{
		{Namespace: "httpbin", Name: "httpbin", Type: "ClusterSetIP",
			Exports:    []render.ExportReport{export("cluster-1", ""), export("cluster-3", "")},
			ImportedBy: []string{"cluster-2"}, Endpoints: map[string]int{"cluster-1": 1, "cluster-3": 2}},
		{Namespace: "web", Name: "api", Type: "ClusterSetIP",
			Exports:    []render.ExportReport{export("cluster-1", "PortConflict"), export("cluster-3", "PortConflict")},
			ImportedBy: []string{"cluster-1", "cluster-2"}, Endpoints: map[string]int{"cluster-1": 3, "cluster-3": 1}},
	}}
	msg := Message(MessageInput{
		Prev: prev, Next: next,
		Changes:  &Changes{Written: []string{"clusters/cluster-2/web/api/serviceimport.yaml", "clusters/cluster-2/httpbin/httpbin/serviceimport.yaml"}},
		Members:  []change.Member{{Name: "cluster-4", Old: change.Reachable, New: change.Unreachable, Reason: "Unreachable"}},
		Trailers: [][2]string{{"Snapshot-Digest", "sha256:abc"}},
	})
	subject, body, _ := strings.Cut(msg, "\n")
	assert.Equal(t, "cluster-1, cluster-3 export httpbin/httpbin to cluster-2; +3 more", subject, "a new service is named by who exports it")
	assert.LessOrEqual(t, len(subject), maxSubject)
	want := `
Imports in cluster-2:
  + httpbin/httpbin (ClusterSetIP from cluster-1, cluster-3)
  ~ web/api

Exports:
  + httpbin/httpbin from cluster-1
  + httpbin/httpbin from cluster-3
  + web/api from cluster-3

Conflicts:
  web/api from cluster-1: PortConflict: ports differ from cluster-1's export; cluster-1 wins
  web/api from cluster-3: PortConflict: ports differ from cluster-1's export; cluster-1 wins

Ready endpoints:
  httpbin/httpbin: cluster-1 0 -> 1, cluster-3 0 -> 2
  web/api: cluster-1 2 -> 3, cluster-3 0 -> 1

Members:
  cluster-4 unreachable (Unreachable); keeping its last known exports

Snapshot-Digest: sha256:abc
`
	assert.Equal(t, want, body)
}

func TestMessageRemovalAndEndpointsOnly(t *testing.T) {
	svc := func(eps int, importers ...string) render.ServiceReport {
		return render.ServiceReport{Namespace: "shop", Name: "cart", Type: "Headless",
			Exports: []render.ExportReport{export("a", "")}, ImportedBy: importers, Endpoints: map[string]int{"a": eps}}
	}
	prev := &render.Report{Services: []render.ServiceReport{svc(2, "a", "b")}}

	msg := Message(MessageInput{Prev: prev, Next: &render.Report{}})
	assert.True(t, strings.HasPrefix(msg, "remove shop/cart from a, b\n\nImports in a:\n  - shop/cart\n"), msg)

	msg = Message(MessageInput{Prev: prev, Next: &render.Report{Services: []render.ServiceReport{svc(5, "a", "b")}}})
	assert.Equal(t, "endpoints of shop/cart\n\nReady endpoints:\n  shop/cart: a 2 -> 5\n", msg)
}

func TestMessageInvalidExport(t *testing.T) {
	next := &render.Report{Services: []render.ServiceReport{{Namespace: "ns", Name: "x",
		Exports: []render.ExportReport{{Member: "m", Conditions: []render.Condition{cond("Valid", "False", "NoService", "no Service")}}}}}}
	msg := Message(MessageInput{Next: next})
	assert.Equal(t, "ns/x invalid in m (NoService)\n\nExports:\n  ! ns/x from m: invalid, NoService\n", msg)
}

func TestMessageFailOver(t *testing.T) {
	svc := func(eps int, clusters ...string) render.ServiceReport {
		return render.ServiceReport{Namespace: "httpbin", Name: "httpbin", Type: "ClusterSetIP",
			Exports:    []render.ExportReport{export("cluster-1", ""), export("cluster-2", "")},
			ImportedBy: []string{"cluster-1", "cluster-2"}, Endpoints: map[string]int{"cluster-1": 1, "cluster-2": eps},
			Policies: []render.PolicyReport{{Member: "cluster-2", LbType: "FailOver", Clusters: clusters}}}
	}
	prev := &render.Report{Services: []render.ServiceReport{svc(1, "cluster-2")}}
	next := &render.Report{Services: []render.ServiceReport{svc(0, "cluster-1")}}
	msg := Message(MessageInput{Prev: prev, Next: next,
		Changes: &Changes{Written: []string{"clusters/cluster-2/httpbin/httpbin/endpointslice-cluster-1-abc.yaml"}}})
	assert.Equal(t, `reroute httpbin/httpbin in cluster-2 (FailOver): cluster-2 -> cluster-1; +1 more

Imports in cluster-2:
  ~ httpbin/httpbin

Traffic policies:
  httpbin/httpbin in cluster-2 (FailOver): cluster-2 -> cluster-1

Ready endpoints:
  httpbin/httpbin: cluster-2 1 -> 0
`, msg)

	// A policy that appears is a change from every exporter.
	first := Message(MessageInput{Prev: &render.Report{Services: []render.ServiceReport{{Namespace: "httpbin", Name: "httpbin",
		Exports: next.Services[0].Exports, ImportedBy: next.Services[0].ImportedBy, Endpoints: next.Services[0].Endpoints}}}, Next: next})
	assert.Contains(t, first, "httpbin/httpbin in cluster-2 (FailOver): all exporters -> cluster-1")
}

func TestMessageFallbacks(t *testing.T) {
	assert.Equal(t, "update snapshot of cluster-1\n", Message(MessageInput{Changes: &Changes{Written: []string{"inputs/cluster-1.yaml"}}}))
	assert.Equal(t, "update the rendered tree\n", Message(MessageInput{}))
	assert.Equal(t, "cluster-2 reachable again\n\nMembers:\n  cluster-2 reachable again\n",
		Message(MessageInput{Members: []change.Member{{Name: "cluster-2", Old: change.Unreachable, New: change.Reachable}}}))
}

func TestSubjectStaysShort(t *testing.T) {
	var next render.Report
	for i := range 20 {
		next.Services = append(next.Services, render.ServiceReport{Namespace: "team", Name: fmt.Sprintf("service-%02d", i),
			Type: "ClusterSetIP", Exports: []render.ExportReport{export("a", "")}, ImportedBy: []string{"a", "b", "c", "d"}})
	}
	subject, _, _ := strings.Cut(Message(MessageInput{Next: &next}), "\n")
	assert.LessOrEqual(t, len(subject), maxSubject)
	assert.Equal(t, "a exports team/service-00 to b, c, d; +19 more", subject)

	long := strings.Repeat("x", 100)
	assert.LessOrEqual(t, len(subject), maxSubject)
	s := Message(MessageInput{Members: []change.Member{{Name: long, Old: change.Reachable, New: change.Unreachable}}})
	subject, _, _ = strings.Cut(s, "\n")
	assert.Len(t, subject, maxSubject)
	assert.True(t, strings.HasSuffix(subject, "..."))
}

func TestSnapshotDigest(t *testing.T) {
	a := SnapshotDigest(map[string][]byte{"inputs/a.yaml": []byte("x"), "inputs/b.yaml": []byte("y")})
	b := SnapshotDigest(map[string][]byte{"inputs/b.yaml": []byte("y"), "inputs/a.yaml": []byte("x")})
	require.Equal(t, a, b)
	assert.True(t, strings.HasPrefix(a, "sha256:"))
	assert.Len(t, a, len("sha256:")+64)
	assert.NotEqual(t, a, SnapshotDigest(map[string][]byte{"inputs/a.yaml": []byte("xy"), "inputs/b.yaml": nil}))
	assert.NotEqual(t, a, SnapshotDigest(map[string][]byte{"inputs/a.yaml": []byte("x")}))
}

// An export review mode holds back is pending, not an export that stopped
// serving; approved, it is a new export, named by who exports it.
func TestMessagePendingReview(t *testing.T) {
	pending := render.ExportReport{Member: "cluster-1", ClusterID: "cluster-1", Conditions: []render.Condition{
		cond("Valid", "True", "Valid", ""), cond("Ready", "False", "PendingReview", "waiting for approval"),
	}}
	held := &render.Report{Services: []render.ServiceReport{{Namespace: "demo", Name: "web", Type: "ClusterSetIP",
		Exports: []render.ExportReport{pending}}}}
	subject, body, _ := strings.Cut(Message(MessageInput{Prev: &render.Report{}, Next: held}), "\n")
	assert.Equal(t, "cluster-1's export of demo/web waits for review", subject)
	assert.Contains(t, body, "  ? demo/web from cluster-1: waits for review\n")

	approved := &render.Report{Services: []render.ServiceReport{{Namespace: "demo", Name: "web", Type: "ClusterSetIP",
		Exports: []render.ExportReport{export("cluster-1", "")}, ImportedBy: []string{"cluster-1", "cluster-2", "cluster-3"},
		Endpoints: map[string]int{"cluster-1": 1}}}}
	subject, _, _ = strings.Cut(Message(MessageInput{Prev: held, Next: approved}), "\n")
	assert.Equal(t, "cluster-1 exports demo/web to cluster-2, cluster-3", subject)
}
