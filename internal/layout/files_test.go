// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// The Gateway a member with tcpListeners: Gateway merges its listeners
// into is written as exactly what server-side apply should send: name,
// namespace and listeners, nothing a typed object adds (no
// creationTimestamp, no empty status), listed in the kustomization; and
// its file, beside the service directories, is no import of its own.
func TestGatewayListenersFile(t *testing.T) {
	const path = "gw/gateway-east-west.yaml"
	out := &render.Output{Members: []render.Member{{Name: "cluster-a", ClusterID: "cluster-a", Objects: []render.Object{{
		Path: path,
		Object: &render.GatewayListeners{
			TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "east-west"},
			Spec: render.GatewayListenersSpec{Listeners: []gatewayv1.Listener{
				{Name: "mcs-tcp-30000", Port: 30000, Protocol: gatewayv1.TCPProtocolType},
			}},
		},
	}}}}}
	files, err := Files(out)
	require.NoError(t, err)
	assert.Equal(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: east-west
  namespace: gw
spec:
  listeners:
  - name: mcs-tcp-30000
    port: 30000
    protocol: TCP
`, string(files[MemberDir("cluster-a")+path]))
	assert.Contains(t, string(files[MemberDir("cluster-a")+"kustomization.yaml"]), "- "+path+"\n")

	_, _, ok := importOf(MemberDir("cluster-a") + path)
	assert.False(t, ok, "the Gateway's file belongs to no import")
	assert.Empty(t, touchedImports(&Changes{Written: []string{MemberDir("cluster-a") + path}}))
}
