// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An app's manifests merged into a member's snapshot leave it as applying
// them would: a Service keeps the cluster IPs and families the apiserver
// assigned, an existing export keeps its age (it decides conflicts), a
// new one is created now; Without deletes what the manifests name.
func TestWithAndWithout(t *testing.T) {
	live, err := Parse("cluster-2", "live.yaml", []byte(`apiVersion: v1
kind: Namespace
metadata: {name: web}
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: web}
spec:
  clusterIP: 10.96.0.7
  clusterIPs: [10.96.0.7]
  ipFamilies: [IPv4]
  ports: [{name: http, port: 80}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: frontend, namespace: web, creationTimestamp: "2026-01-01T00:00:00Z"}
`))
	require.NoError(t, err)
	now := time.Date(2026, 11, 26, 12, 0, 0, 500, time.UTC)
	app, err := ParseManifests("cluster-2", "app", []Source{{File: "app.yaml", Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: frontend, namespace: web}
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: web}
spec:
  ports: [{name: http, port: 8080}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: frontend, namespace: web}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: api, namespace: web}
`)}}, now)
	require.NoError(t, err)
	live.With(app, now)

	require.Len(t, live.Services, 1)
	svc := live.Services[0]
	assert.Equal(t, int32(8080), svc.Spec.Ports[0].Port, "the manifest's spec")
	assert.Equal(t, "10.96.0.7", svc.Spec.ClusterIP, "the assigned cluster IP is kept")
	assert.Equal(t, "IPv4", string(svc.Spec.IPFamilies[0]))
	require.Len(t, live.ServiceExports, 2)
	assert.Equal(t, "api", live.ServiceExports[0].Name, "sorted as a snapshot is")
	assert.True(t, live.ServiceExports[0].CreationTimestamp.Time.Equal(now.Truncate(time.Second)), "a new export is created now")
	assert.Equal(t, 2026, live.ServiceExports[1].CreationTimestamp.Year(), "an existing export keeps its age")
	assert.Equal(t, 1, live.ServiceExports[1].CreationTimestamp.Day())

	live.Without(app)
	assert.Empty(t, live.Services)
	assert.Empty(t, live.ServiceExports)
	assert.Len(t, live.Namespaces, 1, "a namespace is not the app's alone")
}

// Manifests name the file, line and object of what is wrong, and manifests
// with nothing a render reads are refused: the what-if would show nothing.
func TestParseManifestsErrors(t *testing.T) {
	_, err := ParseManifests("cluster-2", "app/", []Source{{File: "app/deploy.yaml", Data: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, namespace: web}\n")}}, time.Now())
	assert.ErrorContains(t, err, "app/: holds 1 object(s), no Namespace, Service, ServiceExport or GlobalTrafficPolicy")
	_, err = ParseManifests("cluster-2", "app/", []Source{{File: "app/svc.yaml", Data: []byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")}}, time.Now())
	assert.ErrorContains(t, err, "app/svc.yaml:1")
	assert.ErrorContains(t, err, "metadata.namespace is required")
	_, err = ParseManifests("cluster-2", "app/", []Source{{File: "app/se.yaml", Data: []byte("apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: x, namespace: web}\nspec: {exportedLabel: {a: b}}\n")}}, time.Now())
	assert.ErrorContains(t, err, "app/se.yaml:1")
	assert.ErrorContains(t, err, "exportedLabel")
}
