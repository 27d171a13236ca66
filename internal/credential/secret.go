// SPDX-License-Identifier: Apache-2.0

package credential

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ServiceAccountNamespacePath is where a Pod's service account namespace is
// mounted.
const ServiceAccountNamespacePath = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// PodNamespaceEnv is the variable a Pod sets from the downward API
// (metadata.namespace), as deploy/controller does.
const PodNamespaceEnv = "POD_NAMESPACE"

// userAgent is sent to the apiserver the Secret is read from.
const userAgent = "mcs-gitops-credential"

// Namespace is where the Secret is read, and what said so (for messages).
type Namespace struct {
	Name string
	From string
}

// ResolveNamespace picks the Secret's namespace: flag (--namespace), else
// podNamespace (POD_NAMESPACE), else the content of saFile (empty:
// ServiceAccountNamespacePath). A missing file is no error; no namespace at
// all is.
func ResolveNamespace(flag, podNamespace, saFile string) (Namespace, error) {
	if saFile == "" {
		saFile = ServiceAccountNamespacePath
	}
	var ns Namespace
	switch {
	case flag != "":
		ns = Namespace{flag, "--namespace"}
	case podNamespace != "":
		ns = Namespace{podNamespace, PodNamespaceEnv}
	default:
		b, err := os.ReadFile(saFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Namespace{}, fmt.Errorf("reading the service account's namespace: %w", err)
		}
		ns = Namespace{strings.TrimSpace(string(b)), saFile}
	}
	if ns.Name == "" {
		return Namespace{}, fmt.Errorf("no namespace to read the Secret from: pass --namespace, set %s "+
			"(the downward API's metadata.namespace), or run in a Pod with its service account mounted (%s)",
			PodNamespaceEnv, saFile)
	}
	if errs := validation.IsDNS1123Label(ns.Name); len(errs) > 0 {
		return Namespace{}, fmt.Errorf("namespace %q (from %s) is not a namespace name: %s", ns.Name, ns.From, strings.Join(errs, "; "))
	}
	return ns, nil
}

// newClient is the clientset the Secret is read with: the kubeconfig
// --kubeconfig names, else the one KUBECONFIG names (clientcmd's loading
// rules, a path list merged), else the in-cluster config. The default
// ~/.kube/config is never read: a plugin run for a controller should not
// pick up whatever identity the machine's user has.
func newClient(kubeconfig, kubeconfigEnv string, timeout time.Duration) (kubernetes.Interface, error) {
	var (
		cfg *rest.Config
		err error
	)
	switch {
	case kubeconfig != "" || kubeconfigEnv != "":
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
		what := "--kubeconfig " + kubeconfig
		if kubeconfig == "" {
			rules.Precedence = filepath.SplitList(kubeconfigEnv)
			what = "KUBECONFIG " + kubeconfigEnv
		}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, inputErr("%s: %w", what, err)
		}
	default:
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, inputErr("no cluster to read the Secret from: not in a Pod (%w), and neither --kubeconfig nor KUBECONFIG is set", err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	cfg.Timeout = timeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, inputErr("client for the Secret's cluster: %w", err)
	}
	return cs, nil
}

// ReadToken returns the value of key in the Secret ns/name, without the
// surrounding whitespace a file-made Secret often carries (as client-go
// trims a token file); with labelled, only from a Secret whose
// MemberLabel is name. Errors name the Secret, the key and where the
// namespace came from; never the value.
func ReadToken(ctx context.Context, cs kubernetes.Interface, ns Namespace, name, key string, labelled bool) (string, error) {
	where := fmt.Sprintf("Secret %s/%s", ns.Name, name)
	from := fmt.Sprintf("(namespace from %s)", ns.From)
	sec, err := cs.CoreV1().Secrets(ns.Name).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return "", fmt.Errorf("%s does not exist %s: it must hold the cluster's token in key %q", where, from, key)
		case apierrors.IsForbidden(err):
			return "", fmt.Errorf("%s %s: reading it is forbidden: the identity needs get on secrets in namespace %s: %w", where, from, ns.Name, err)
		}
		return "", fmt.Errorf("%s %s: %w", where, from, err)
	}
	if labelled && sec.Labels[MemberLabel] != name {
		return "", fmt.Errorf("%s is not labelled %s=%s, so it is not read: a ClusterProfile names the Secret, and only one made for that cluster may answer (member join --cluster-profile labels it; --any-secret reads one another tool wrote)", where, MemberLabel, name)
	}
	v, ok := sec.Data[key]
	if !ok {
		keys := make([]string, 0, len(sec.Data))
		for k := range sec.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		has := "it has no keys"
		if len(keys) > 0 {
			has = "keys: " + strings.Join(keys, ", ")
		}
		return "", fmt.Errorf("%s has no key %q (%s)", where, key, has)
	}
	token := strings.TrimSpace(string(v))
	if token == "" {
		return "", fmt.Errorf("%s key %q is empty", where, key)
	}
	if strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", fmt.Errorf("%s key %q holds whitespace or control characters inside the value: not a bearer token", where, key)
	}
	return token, nil
}
