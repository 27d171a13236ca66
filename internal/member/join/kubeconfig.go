// SPDX-License-Identifier: Apache-2.0

package join

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// memberKubeconfig is a kubeconfig for the member that authenticates with
// token alone: the administrator's way of reaching the apiserver (its CA,
// server name) with none of its credentials. server replaces the
// administrator's URL when the management cluster reaches the member by
// another address.
func memberKubeconfig(name string, admin *rest.Config, server, token string) ([]byte, error) {
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		b, err := os.ReadFile(admin.CAFile)
		if err != nil {
			return nil, fmt.Errorf("member %q: read the CA file of its kubeconfig: %w", name, err)
		}
		ca = b
	}
	if server == "" {
		server = admin.Host
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server: server, CertificateAuthorityData: ca, TLSServerName: admin.ServerName, InsecureSkipTLSVerify: admin.Insecure,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	b, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("member %q: encode kubeconfig: %w", name, err)
	}
	return b, nil
}

// restConfig parses a kubeconfig join wrote.
func restConfig(kubeconfig []byte) (*rest.Config, error) {
	return clientcmd.RESTConfigFromKubeConfig(kubeconfig)
}

// kubeconfigToken and kubeconfigServer read back what memberKubeconfig
// wrote, to decide whether a Secret's token can be kept.
func kubeconfigToken(kubeconfig []byte) (token, server string, ok bool) {
	kc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return "", "", false
	}
	ctx, found := kc.Contexts[kc.CurrentContext]
	if !found {
		return "", "", false
	}
	auth, c := kc.AuthInfos[ctx.AuthInfo], kc.Clusters[ctx.Cluster]
	if auth == nil || c == nil || auth.Token == "" {
		return "", "", false
	}
	return auth.Token, c.Server, true
}
