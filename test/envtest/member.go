// SPDX-License-Identifier: Apache-2.0

package envtest

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WriteKubeconfig writes a kubeconfig for the cluster to path, with one
// context named after the cluster, as a member's kubeconfig file would be.
// The file holds the test apiserver's throwaway client certificate.
func (c *Cluster) WriteKubeconfig(path string) error {
	return c.writeKubeconfig(path, &clientcmdapi.AuthInfo{
		ClientCertificateData: c.Config.CertData, ClientKeyData: c.Config.KeyData, Token: c.Config.BearerToken,
	})
}

func (c *Cluster) writeKubeconfig(path string, auth *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos[c.Name] = auth
	cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name}
	cfg.CurrentContext = c.Name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("cluster %q: write kubeconfig: %w", c.Name, err)
	}
	return nil
}

// StopAPIServer stops the cluster's kube-apiserver, leaving etcd running,
// to play a member that has gone down. It cannot be started again.
func (c *Cluster) StopAPIServer() error {
	if err := c.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("cluster %q: stop apiserver: %w", c.Name, err)
	}
	return nil
}

// WriteKubeconfigAs writes a kubeconfig like WriteKubeconfig whose client
// certificate authenticates as user in groups instead of as the test's
// administrator, so a test runs with only what RBAC grants that user (a
// ServiceAccount's user name is system:serviceaccount:<namespace>:<name>).
func (c *Cluster) WriteKubeconfigAs(path, user string, groups ...string) error {
	u, err := c.env.ControlPlane.AddUser(crenvtest.User{Name: user, Groups: groups}, nil)
	if err != nil {
		return fmt.Errorf("cluster %q: add user %s: %w", c.Name, user, err)
	}
	rc := u.Config()
	return c.writeKubeconfig(path, &clientcmdapi.AuthInfo{ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData})
}
