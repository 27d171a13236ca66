// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// errUnparsable replaces the kubeconfig parser's own message: YAML decode
// errors quote the offending value, which may be a token or a key.
const errUnparsable = "not a valid kubeconfig (parser details withheld: they can quote credentials)"

// kubeconfigFile builds a config from a kubeconfig file and context (empty:
// its current-context). Relative certificate paths in the file resolve
// against the file, as kubectl does.
func kubeconfigFile(path, context string) (*rest.Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("kubeconfig %s does not exist", path)
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %s", path, errUnparsable)
	}
	for name, a := range raw.AuthInfos {
		a.LocationOfOrigin = path
		raw.AuthInfos[name] = a
	}
	for name, c := range raw.Clusters {
		c.LocationOfOrigin = path
		raw.Clusters[name] = c
	}
	if err := clientcmd.ResolveLocalPaths(raw); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg, err := restConfig(raw, context)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// kubeconfigSecret builds a config from kubeconfig bytes read from a Secret
// (its current-context). A kubeconfig from a Secret may not run commands
// (exec or auth-provider plugins) or read local files: whoever can write
// that Secret must not gain code execution or file access in mcs-gitops.
func kubeconfigSecret(data []byte, ref v1alpha1.SecretKeyRef) (*rest.Config, error) {
	where := fmt.Sprintf("kubeconfig in Secret %s/%s key %q", ref.Namespace, ref.Name, ref.Key)
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", where, errUnparsable)
	}
	for name, a := range raw.AuthInfos {
		switch {
		case a.Exec != nil:
			return nil, fmt.Errorf("%s: user %q uses an exec plugin, which is refused for kubeconfigs read from Secrets", where, name)
		case a.AuthProvider != nil:
			return nil, fmt.Errorf("%s: user %q uses an auth-provider plugin, which is refused for kubeconfigs read from Secrets", where, name)
		case a.ClientCertificate != "" || a.ClientKey != "" || a.TokenFile != "":
			return nil, fmt.Errorf("%s: user %q refers to local files; embed the data (client-certificate-data, client-key-data, token) instead", where, name)
		}
	}
	for name, c := range raw.Clusters {
		if c.CertificateAuthority != "" {
			return nil, fmt.Errorf("%s: cluster %q refers to a local CA file; embed certificate-authority-data instead", where, name)
		}
	}
	cfg, err := restConfig(raw, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}

func restConfig(raw *clientcmdapi.Config, context string) (*rest.Config, error) {
	name := context
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		return nil, errors.New("no context given and no current-context set")
	}
	if _, ok := raw.Contexts[name]; !ok {
		return nil, fmt.Errorf("context %q does not exist", name)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		// clientcmd's validation messages name contexts, users, clusters and
		// files, never credential values.
		return nil, err
	}
	return cfg, nil
}
