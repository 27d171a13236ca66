// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/credential"
)

func newCredentialCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "credential",
		Short: "Client-go exec credential plugins, for members from the cluster inventory",
		Long: `A consumer of the SIG Multicluster cluster inventory (ClusterProfile,
KEP-4322) builds each member's client from the profile's access provider
and an exec credential plugin named in its provider file (KEP-5339).
client-go runs the plugin for a token whenever it needs one. The plugins
here are built into mcs-gitops, so the image needs no other binary.`,
		Example: `  mcs-gitops credential secret-token --help`,
	}
	cmd.AddCommand(newSecretTokenCommand())
	return cmd
}

func newSecretTokenCommand() *cobra.Command {
	o := credential.Options{Key: credential.DefaultKey, Timeout: credential.DefaultTimeout}
	cmd := &cobra.Command{
		Use:   "secret-token",
		Short: "Answer client-go with the token in Secret <namespace>/<clusterName> (the secretreader protocol)",
		Long: `secret-token is an exec credential plugin speaking the protocol of the
cluster inventory's reference plugin "secretreader". client-go runs it with
an ExecCredential (client.authentication.k8s.io/v1 or v1beta1) in
KUBERNETES_EXEC_INFO. Its spec.cluster.config is the value of the access
provider's cluster extension client.authentication.k8s.io/exec, which must
name the Secret:

  status:
    accessProviders:
    - name: secretreader
      cluster:
        server: https://spoke-1.example:6443
        certificate-authority-data: <base64 CA>
        extensions:
        - name: client.authentication.k8s.io/exec
          extension:
            clusterName: spoke-1

and the provider file must set "provideClusterInfo": true, or client-go
sends no spec.cluster at all.

The command reads key "token" (--key) of the Secret <namespace>/<clusterName>,
which must be labelled ` + credential.MemberLabel + `=<clusterName> (member join
--cluster-profile labels it) unless --any-secret: the profile names the
Secret, and the label keeps a profile from naming another one, and prints an ExecCredential of the request's apiVersion with that token in
status.token, without surrounding whitespace. It sets no expiration: the
Secret does not say when the token expires, and client-go runs the plugin
again when the member answers 401, so a rotated token is picked up then.

The namespace is --namespace, else $POD_NAMESPACE, else the Pod's service
account namespace (/var/run/secrets/kubernetes.io/serviceaccount/namespace);
with none of them the command fails instead of guessing. The Secret is read
with the kubeconfig --kubeconfig or $KUBECONFIG names, else with the Pod's
in-cluster config, never ~/.kube/config. That identity needs get on secrets
in the namespace (a Role, best with resourceNames).

Only the ExecCredential goes to stdout. Errors go to stderr and name the
Secret, key and namespace, never the token.

Exit codes: 0 done; 1 the Secret could not be read or holds no usable
token; 2 the request, a flag, the namespace or the kubeconfig is wrong.`,
		Example: `  # the provider file (KEP-5339) of a consumer running in the management cluster
  {"providers": [{"name": "secretreader", "execConfig": {
    "apiVersion": "client.authentication.k8s.io/v1",
    "command": "/mcs-gitops", "args": ["credential", "secret-token"],
    "provideClusterInfo": true}}]}

  # by hand, as client-go would run it
  KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
    "spec":{"cluster":{"server":"https://spoke-1.example:6443","config":{"clusterName":"spoke-1"}}}}' \
    mcs-gitops credential secret-token --namespace fleet-system`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ExecInfo = os.Getenv(credential.ExecInfoEnv)
			o.PodNamespace = os.Getenv(credential.PodNamespaceEnv)
			o.KubeconfigEnv = os.Getenv("KUBECONFIG")
			err := credential.Run(cmd.Context(), o, cmd.OutOrStdout())
			var ie *credential.InputError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &ie):
				return &exitError{2, err}
			}
			return &exitError{1, err}
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.Namespace, "namespace", "n", "", "namespace of the Secret (default: $POD_NAMESPACE, else the Pod's service account namespace)")
	fl.StringVar(&o.Key, "key", o.Key, "key of the Secret holding the token")
	fl.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig to read the Secret with (default: $KUBECONFIG, else the in-cluster config)")
	fl.DurationVar(&o.Timeout, "timeout", o.Timeout, "limit on reading the Secret")
	fl.BoolVar(&o.AnySecret, "any-secret", false, "read the Secret even without the label "+credential.MemberLabel+"=<clusterName> (one another tool wrote for the secretreader protocol)")
	return cmd
}
