// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubeconfigFor builds kubeconfig bytes for cfg (embedded certificates)
// under context name ctxName, which is also the current context.
func kubeconfigFor(t *testing.T, cfg *rest.Config, ctxName string) *clientcmdapi.Config {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters[ctxName] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[ctxName] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts[ctxName] = &clientcmdapi.Context{Cluster: ctxName, AuthInfo: ctxName}
	kc.CurrentContext = ctxName
	return kc
}

func writeKubeconfig(t *testing.T, kc *clientcmdapi.Config) []byte {
	t.Helper()
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// withHost is cfg pointing at another address; TLS still verifies, since
// the serving certificate is for 127.0.0.1 whatever the port.
func withHost(cfg *rest.Config, host string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = "https://" + host
	return c
}

// closedAddr is a local address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// proxy forwards TCP to a real apiserver and can be stopped and started
// again on the same address: to a client it is an apiserver going down and
// coming back.
type proxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	l      net.Listener
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, addr: closedAddr(t), target: target}
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) start() {
	p.t.Helper()
	var l net.Listener
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) {
			var err error
			l, err = net.Listen("tcp", p.addr)
			return err == nil, nil
		})
	if err != nil {
		p.t.Fatalf("proxy: listening on %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// installClusterPropertyCRD serves about.k8s.io/v1alpha1 ClusterProperty
// (KEP-2149), which the mcs-api CRDs do not include.
func installClusterPropertyCRD(t *testing.T, c client.Client) {
	t.Helper()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "clusterproperties.about.k8s.io", Annotations: map[string]string{
			"api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/3084",
		}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "about.k8s.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "clusterproperties", Singular: "clusterproperty", Kind: "ClusterProperty", ListKind: "ClusterPropertyList"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	installCRD(t, c, crd)
}

// installCRD creates crd and waits until it is established and the client
// can map its kind.
func installCRD(t *testing.T, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return false, nil
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				// Established is not yet in discovery: wait until the
				// client can map the kind, or the first create races it.
				_, err := c.RESTMapper().RESTMapping(gk, crd.Spec.Versions[0].Name)
				return err == nil, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s CRD not established and discovered: %v", gk, err)
	}
}

// clientcmdAuth builds the AuthInfo variants the tests need.
type clientcmdAuth struct {
	ClientCertificate, ClientKey string
	Exec                         bool
}

func (a clientcmdAuth) info() *clientcmdapi.AuthInfo {
	ai := &clientcmdapi.AuthInfo{ClientCertificate: a.ClientCertificate, ClientKey: a.ClientKey}
	if a.Exec {
		ai.Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/true", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
	}
	return ai
}
