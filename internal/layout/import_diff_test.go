// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// How a merged import changed, field by field, old -> new: a port by name
// (or number when unnamed) changed, added, removed; the scalar fields; the
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
		"port http 8000/TCP -> 8001/TCP http",
		"port grpc added (9090/TCP)",
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
	assert.Contains(t, msg, "  ~ httpbin/httpbin: port http 8000/TCP -> 8001/TCP\n")
	sum := NewChangeSummary(report(8000), report(8001), c, []string{"cluster-1"})
	assert.Contains(t, sum.Markdown(), "- import changed: `httpbin/httpbin`: port http 8000/TCP -&gt; 8001/TCP\n")
}
