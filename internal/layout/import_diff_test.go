// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// How a merged import changed, field by field, old -> new: a port by name
// (or number when unnamed; ports in key order) changed, added, removed; the scalar fields; the
// exported metadata. A service that appears or goes has no field changes:
// that is said as an import added or removed.
func TestImportChanges(t *testing.T) {
	svc := func(typ string, spec render.ImportSpec) *render.ServiceReport {
		return &render.ServiceReport{Namespace: "shop", Name: "web", Type: typ, Import: &spec}
	}
	base := render.ImportSpec{
		Ports:           []render.ImportPort{{Name: "http", Port: 8000, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}, {Name: "old", Port: 1, Protocol: "TCP"}},
		SessionAffinity: "None", IPFamilies: []string{"IPv4"}, InternalTrafficPolicy: "Cluster",
		ExportedLabels: map[string]string{"team": "web", "tier": "front"},
	}
	next := render.ImportSpec{
		Ports: []render.ImportPort{{Name: "http", Port: 8001, Protocol: "TCP", AppProtocol: "http"}, {Port: 53, Protocol: "UDP"},
			{Name: "grpc", Port: 9090, Protocol: "TCP"}},
		SessionAffinity: "ClientIP", IPFamilies: []string{"IPv4", "IPv6"}, InternalTrafficPolicy: "Cluster", TrafficDistribution: "PreferClose",
		ExportedLabels: map[string]string{"team": "shop", "env": "prod"},
	}
	assert.Equal(t, []string{
		"type ClusterSetIP -> Headless",
		"port grpc added (9090/TCP)",
		"port http 8000/TCP -> 8001/TCP http",
		"port old removed (was 1/TCP)",
		"sessionAffinity None -> ClientIP",
		"ipFamilies IPv4 -> IPv4,IPv6",
		"trafficDistribution (none) -> PreferClose",
		"label env=prod added",
		"label team web -> shop",
		"label tier removed",
	}, importChanges(svc("ClusterSetIP", base), svc("Headless", next)))
	assert.Empty(t, importChanges(svc("ClusterSetIP", base), svc("ClusterSetIP", base)), "nothing changed")
	assert.Empty(t, importChanges(nil, svc("ClusterSetIP", base)), "a new service")
	assert.Empty(t, importChanges(&render.ServiceReport{}, svc("ClusterSetIP", base)), "a commit from before imports were recorded")
}

// A port change is said in the subject, the message body and the
// summary, where it used to be "import changed" and a file count.
func TestMessageSaysWhatChanged(t *testing.T) {
	report := func(port int32) *render.Report {
		return &render.Report{Services: []render.ServiceReport{{
			Namespace: "httpbin", Name: "httpbin", Type: "ClusterSetIP", ImportedBy: []string{"cluster-1"},
			Exports: []render.ExportReport{{Member: "cluster-1"}},
			Import:  &render.ImportSpec{Ports: []render.ImportPort{{Name: "http", Port: port, Protocol: "TCP"}}, SessionAffinity: "None"},
		}}}
	}
	c := &Changes{Written: []string{"clusters/cluster-1/httpbin/httpbin/serviceimport.yaml"}}
	msg := Message(MessageInput{Prev: report(8000), Next: report(8001), Changes: c})
	assert.Contains(t, msg, "change httpbin/httpbin: port http 8000/TCP -> 8001/TCP\n")
	assert.Contains(t, msg, "Changed imports:\n  httpbin/httpbin: port http 8000/TCP -> 8001/TCP\n")
	assert.Contains(t, msg, "Imports in cluster-1:\n  ~ httpbin/httpbin\n", "said once, not once per member")
	sum := NewChangeSummary(report(8000), report(8001), c, []string{"cluster-1"})
	assert.Contains(t, sum.Markdown(), "### Changed imports\n\n- `httpbin/httpbin`: port http 8000/TCP -&gt; 8001/TCP\n")
	assert.Contains(t, sum.Markdown(), "- import changed: `httpbin/httpbin`\n")
}

// A new service is headlined by who exports it and to whom, not as an
// import into the exporter; a service that gains importers otherwise is
// an import; a policy change says how, old -> new; a policy removed too.
func TestHeadlinesNameTheActor(t *testing.T) {
	svc := func(exporters []string, importedBy ...string) render.ServiceReport {
		s := render.ServiceReport{Namespace: "web", Name: "frontend", Type: "ClusterSetIP", ImportedBy: importedBy}
		for _, e := range exporters {
			s.Exports = append(s.Exports, render.ExportReport{Member: e})
		}
		return s
	}
	subject := func(prev, next *render.Report) string {
		s, _, _ := strings.Cut(Message(MessageInput{Prev: prev, Next: next}), "\n")
		return s
	}
	assert.Equal(t, "cluster-2 exports web/frontend to cluster-1, cluster-3",
		subject(&render.Report{}, &render.Report{Services: []render.ServiceReport{svc([]string{"cluster-2"}, "cluster-1", "cluster-2", "cluster-3")}}))
	assert.Equal(t, "cluster-2 exports web/frontend; no other member imports it",
		subject(&render.Report{}, &render.Report{Services: []render.ServiceReport{svc([]string{"cluster-2"}, "cluster-2")}}))
	assert.Equal(t, "import web/frontend into cluster-3",
		subject(&render.Report{Services: []render.ServiceReport{svc([]string{"cluster-2"}, "cluster-2")}},
			&render.Report{Services: []render.ServiceReport{svc([]string{"cluster-2"}, "cluster-2", "cluster-3")}}))

	policy := func(lb string, clusters []string, weights map[string]int32) *render.ServiceReport {
		s := svc([]string{"cluster-1", "cluster-2"}, "cluster-1", "cluster-2")
		s.Policies = []render.PolicyReport{{Member: "cluster-2", LbType: lb, Clusters: clusters, Weights: weights}}
		return &s
	}
	assert.Equal(t, []string{"cluster-2: FailOver (c1, then c2) -> ActiveActive (c1=80, c2=20)"},
		policyChanges(policy("FailOver", []string{"c1", "c2"}, nil), policy("ActiveActive", []string{"c1", "c2"}, map[string]int32{"c1": 80, "c2": 20})))
	assert.Equal(t, []string{"cluster-2 (ActiveActive): weights c1=50, c2=50 -> c1=80, c2=20"},
		policyChanges(policy("ActiveActive", []string{"c1", "c2"}, map[string]int32{"c1": 50, "c2": 50}), policy("ActiveActive", []string{"c1", "c2"}, map[string]int32{"c1": 80, "c2": 20})))
	noPolicy := svc([]string{"cluster-1", "cluster-2"}, "cluster-1", "cluster-2")
	assert.Equal(t, []string{"cluster-2 (FailOver): policy removed, c2, c1 -> all exporters"},
		policyChanges(policy("FailOver", []string{"c2", "c1"}, nil), &noPolicy))
}

// importChanges and policyChanges word one service's change as the
// message does.
func importChanges(prev, next *render.ServiceReport) []string {
	return fieldLines(change.ServiceBetween(prev, next).Fields)
}

func policyChanges(prev, next *render.ServiceReport) []string {
	return policyLines(change.ServiceBetween(prev, next).Policies)
}
