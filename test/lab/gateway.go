// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mcs-gitops/mcs-gitops/schemas/crds"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// A gateway member runs Traefik (built by `make testbin`) on its node as
// the Gateway API implementation behind one east-west Gateway, the shape
// docs/gateway-mode.md asks users for: GatewayNamespace/GatewayName with an
// HTTP listener on port 80. Traefik serves a listener only on an entry
// point of the same port, so it gets one per port of GatewayTCPPorts.
const (
	GatewayNamespace = "mcs-gateway"
	GatewayName      = "east-west"
	gatewayClass     = "traefik"
	traefikPing      = "127.0.0.1:9000"
)

// GatewayTCPPorts is the tcpPorts range a gateway member's config should
// name: Traefik listens on each.
var GatewayTCPPorts = [2]int{30000, 30009}

// GatewayHost is the address other members reach the member's gateway at:
// its node's first address.
func (m *Member) GatewayHost() string { return m.node.nodeIPs()[0].String() }

// startGateway installs the CRDs Traefik watches, the GatewayClass and the
// Gateway, runs Traefik in the node and waits for the Gateway to be
// programmed.
func (l *Lab) startGateway(ctx context.Context, m *Member) error {
	extra, err := crds.ForImplementations()
	if err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	if _, err := crenvtest.InstallCRDs(m.Config, crenvtest.CRDInstallOptions{CRDs: extra}); err != nil {
		return fmt.Errorf("cluster %q: installing %v: %w", m.Name, crds.ImplementationFiles, err)
	}
	if err := envtest.EnsureNamespaces(ctx, m.Cluster.Client, GatewayNamespace); err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	// Unstructured: the members' client scheme has no Gateway API types.
	gc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": gatewayClass},
		"spec":     map[string]any{"controllerName": "traefik.io/gateway-controller"},
	}}
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"namespace": GatewayNamespace, "name": GatewayName},
		"spec": map[string]any{
			"gatewayClassName": gatewayClass,
			"listeners": []any{map[string]any{
				"name": "http", "protocol": "HTTP", "port": int64(80),
				"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}},
			}},
		},
	}}
	for _, o := range []*unstructured.Unstructured{gc, gw} {
		if err := m.Cluster.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("cluster %q: %s: %w", m.Name, o.GetKind(), err)
		}
	}

	dir, _ := envtest.AssetsDir()
	args := []string{
		// Nothing leaves the lab: no release check, no usage data.
		"--global.checkNewVersion=false", "--global.sendAnonymousUsage=false",
		"--log.level=INFO", "--log.noColor=true", "--ping=true", "--entryPoints.traefik.address=" + traefikPing,
		"--entryPoints.web.address=:80",
		"--providers.kubernetesgateway=true", "--providers.kubernetesgateway.experimentalchannel=true",
	}
	for p := GatewayTCPPorts[0]; p <= GatewayTCPPorts[1]; p++ {
		args = append(args, "--entryPoints.tcp"+strconv.Itoa(p)+".address=:"+strconv.Itoa(p))
	}
	env := append(baseEnv(), "KUBECONFIG="+m.Kubeconfig)
	tr, err := startProc(m.Name+"/traefik", m.node.netns, env, filepath.Join(dir, "traefik"), args...)
	if err != nil {
		return fmt.Errorf("cluster %q: %w", m.Name, err)
	}
	l.track(tr)
	if err := waitFor(ctx, readyTimeout, func(ctx context.Context) error {
		if tr.exited() {
			return fmt.Errorf("traefik exited: %v", tr.waitErr)
		}
		if err := httpOK(ctx, m.node.netns, "http://"+traefikPing+"/ping"); err != nil {
			return err
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gw.GroupVersionKind())
		if err := m.Cluster.Client.Get(ctx, client.ObjectKeyFromObject(gw), got); err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == "Programmed" && c["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("Gateway %s/%s not programmed: %v", GatewayNamespace, GatewayName, conds)
	}); err != nil {
		return fmt.Errorf("cluster %q: Traefik not serving the Gateway: %w\nits output:\n%s", m.Name, err, tr.out.String())
	}
	return nil
}
