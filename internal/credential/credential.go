// SPDX-License-Identifier: Apache-2.0

// Package credential owns mcs-gitops's client-go exec credential plugin for
// members taken from the SIG Multicluster cluster inventory (ClusterProfile,
// KEP-4322, with the exec providers of KEP-5339): `mcs-gitops credential
// secret-token`, the protocol of the upstream reference plugin
// "secretreader" (sigs.k8s.io/cluster-inventory-api). client-go runs it
// with an ExecCredential in KUBERNETES_EXEC_INFO whose spec.cluster.config
// carries the profile's client.authentication.k8s.io/exec extension; the
// plugin reads the `clusterName` there, and answers with the token held in
// the Secret <its namespace>/<clusterName>.
//
// It owns parsing that request, finding the namespace, reading that one
// Secret and writing the response. It must not write anything to a
// cluster, read any Secret but the one the request names, or put the token
// anywhere but the response on stdout: never into an error or a log.
package credential

import (
	"context"
	"fmt"
	"io"
	"time"
)

// MemberLabel must name the cluster on the Secret the plugin reads
// (`member join --cluster-profile` sets it), unless Options.AnySecret:
// the Secret's name comes from the profile, so without the label whoever
// writes a profile could make the plugin send the token key of any
// Secret it may read, a Git credential say, to the profile's server.
const MemberLabel = "mcs-gitops.io/member"

// DefaultKey is the Secret key that holds the token, as upstream's
// secretreader reads it.
const DefaultKey = "token"

// DefaultTimeout bounds the whole plugin run: client-go waits for an exec
// plugin without a limit of its own, so a hanging apiserver would hang
// every request of the consumer's client.
const DefaultTimeout = 30 * time.Second

// Options are the plugin's inputs. The caller reads them from flags and the
// environment, so that everything here can be given directly by a test.
type Options struct {
	// ExecInfo is KUBERNETES_EXEC_INFO: the ExecCredential client-go sends.
	ExecInfo string
	// Namespace (--namespace) is where the Secret lives; when empty,
	// PodNamespace, then the file ServiceAccountNamespaceFile names.
	Namespace string
	// PodNamespace is the environment's POD_NAMESPACE.
	PodNamespace string
	// ServiceAccountNamespaceFile is the namespace file of a Pod's service
	// account; empty means ServiceAccountNamespacePath.
	ServiceAccountNamespaceFile string
	// Kubeconfig (--kubeconfig) is the kubeconfig to read the Secret
	// with; when empty, KubeconfigEnv; when both are empty, the in-cluster
	// config.
	Kubeconfig string
	// KubeconfigEnv is the environment's KUBECONFIG (a path list).
	KubeconfigEnv string
	// Key is the Secret key holding the token; empty means DefaultKey.
	Key string
	// AnySecret reads a Secret without the MemberLabel naming the
	// cluster: one another tool wrote for the secretreader protocol.
	AnySecret bool
	// Timeout bounds reading the Secret; zero means DefaultTimeout.
	Timeout time.Duration
}

// InputError is a failure of the plugin's input (the request, the flags,
// the namespace, the kubeconfig) rather than of reading the Secret.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(format string, a ...any) error {
	return &InputError{fmt.Errorf(format, a...)}
}

// Run answers the request in o.ExecInfo with the token of the Secret it
// names, written to w as an ExecCredential of the request's apiVersion.
// Nothing is written to w unless the whole run succeeds. Errors name the
// Secret, key and namespace, never the token; an *InputError is a problem
// with the input.
func Run(ctx context.Context, o Options, w io.Writer) error {
	req, err := ParseRequest([]byte(o.ExecInfo))
	if err != nil {
		return &InputError{err}
	}
	ns, err := ResolveNamespace(o.Namespace, o.PodNamespace, o.ServiceAccountNamespaceFile)
	if err != nil {
		return &InputError{err}
	}
	key := o.Key
	if key == "" {
		key = DefaultKey
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cs, err := newClient(o.Kubeconfig, o.KubeconfigEnv, timeout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	token, err := ReadToken(ctx, cs, ns, req.ClusterName, key, !o.AnySecret)
	if err != nil {
		return err
	}
	b, err := Response(req.APIVersion, token)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("writing the ExecCredential: %w", err)
	}
	return nil
}
