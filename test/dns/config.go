// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes cfg as a kubeconfig file (mode 0600) under dir and
// returns its path. Errors never contain the file's content.
func writeKubeconfig(cfg *rest.Config, dir string) (string, error) {
	if cfg == nil || cfg.Host == "" {
		return "", errors.New("rest.Config has no host")
	}
	server := cfg.Host
	if !strings.Contains(server, "://") {
		scheme := "https://"
		if len(cfg.CAData) == 0 && cfg.CAFile == "" && !cfg.Insecure {
			scheme = "http://"
		}
		server = scheme + server
	}
	const name = "envtest"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthority:     cfg.CAFile,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
		TLSServerName:            cfg.ServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificate:     cfg.CertFile,
		ClientCertificateData: cfg.CertData,
		ClientKey:             cfg.KeyFile,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
		TokenFile:             cfg.BearerTokenFile,
		Username:              cfg.Username,
		Password:              cfg.Password,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		// WriteToFile's errors come from encoding or the file system and
		// never echo the content.
		return "", fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", fmt.Errorf("restricting kubeconfig %s: %w", path, err)
	}
	return path, nil
}

// corefile is the configuration CoreDNS runs with: the kubernetes plugin
// authoritative for cluster.local and zone, with zone as its multicluster
// zone (the shape the CoreDNS README documents for MCS), on 127.0.0.1:dnsPort,
// and the ready plugin on 127.0.0.1:readyPort. No cache plugin, so an answer
// changes as soon as the plugin's informers see a change; no log plugin, so a
// failing test's output tail shows CoreDNS's errors, not the polling queries.
func corefile(zone, kubeconfig string, dnsPort, readyPort int) string {
	return fmt.Sprintf(`cluster.local:%[2]d %[1]s:%[2]d {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:%[3]d
    kubernetes cluster.local %[1]s {
        kubeconfig %[4]q
        multicluster %[1]s
        startup_timeout 30s
    }
}
`, zone, dnsPort, readyPort, kubeconfig)
}
