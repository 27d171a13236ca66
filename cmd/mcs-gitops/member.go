// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/member/join"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func newMemberCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "member",
		Short: "Join a cluster to the ClusterSet, or make it leave",
		Long: `Member prepares a cluster to be a member of the ClusterSet (join) and
removes that preparation (leave), with the cluster's administrator
credentials, which are used for the installation only and never stored.`,
		Example: `  mcs-gitops member join cluster-3 --kubeconfig ~/.kube/config --context cluster-3-admin \
    --management-kubeconfig mgmt.kubeconfig
  mcs-gitops member leave cluster-3 --kubeconfig ~/.kube/config --context cluster-3-admin \
    --management-kubeconfig mgmt.kubeconfig`,
	}
	cmd.AddCommand(newJoinCommand(), newLeaveCommand())
	return cmd
}

// memberFlags are join's and leave's.
type memberFlags struct {
	kubeconfig, context           string
	management, managementContext string
	namespace                     string
	dryRun                        bool
}

func (f *memberFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "the member's administrator kubeconfig (default: $KUBECONFIG or ~/.kube/config, as kubectl)")
	fl.StringVar(&f.context, "context", "", "context of --kubeconfig to use (default: its current context)")
	fl.StringVar(&f.management, "management-kubeconfig", "", "kubeconfig of the management cluster where mcs-gitops runs: the member's kubeconfig Secret is written there")
	fl.StringVar(&f.managementContext, "management-context", "", "context of --management-kubeconfig")
	fl.StringVar(&f.namespace, "namespace", "mcs-gitops", "namespace of mcs-gitops in the management cluster")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would change and change nothing (every write is a server-side dry run)")
}

func loadKubeconfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func (f *memberFlags) options(name string) (join.Options, error) {
	admin, err := loadKubeconfig(f.kubeconfig, f.context)
	if err != nil {
		return join.Options{}, &exitError{2, fmt.Errorf("member %q: administrator kubeconfig: %w", name, err)}
	}
	o := join.Options{Member: name, Admin: admin, Namespace: f.namespace, DryRun: f.dryRun}
	if f.management != "" {
		mc, err := loadKubeconfig(f.management, f.managementContext)
		if err != nil {
			return join.Options{}, &exitError{2, fmt.Errorf("--management-kubeconfig: %w", err)}
		}
		if o.Management, err = client.New(mc, client.Options{}); err != nil {
			return join.Options{}, &exitError{2, fmt.Errorf("management cluster: %w", err)}
		}
	}
	return o, nil
}

func newJoinCommand() *cobra.Command {
	var (
		f             memberFlags
		config        string
		server        string
		gateway       bool
		createNS      bool
		policy        string
		dns           bool
		corednsCM     string
		zone          string
		ttl           time.Duration
		rotate        bool
		kubeconfigOut string
		crdWait       time.Duration
		profile       bool
		profileNS     string
		clusterID     string
	)
	cmd := &cobra.Command{
		Use:   "join NAME",
		Short: "Prepare a cluster as member NAME and hand its least-privilege identity to mcs-gitops",
		Long: `Join uses the member's administrator kubeconfig to install what mcs-gitops
needs there, each by server-side apply (field manager mcs-gitops-join):

  - the ServiceExport and ServiceImport CRDs (sigs.k8s.io/mcs-api, the version
    in ` + "`mcs-gitops version`" + `) and the GlobalTrafficPolicy CRD; with --gateway
    the Gateway API CRDs too. A CRD someone else installed is kept when it
    serves the versions mcs-gitops needs, and is an error otherwise. A CRD
    that is being deleted is waited for (--crd-delete-timeout) and installed
    again once it is gone;
  - the member role of deploy/member-rbac, bound to ServiceAccount
    kube-system/mcs-gitops (with --create-namespaces the right to create
    Namespaces); the admission policy of deploy/member-rbac/admission-policy
    when the member serves ValidatingAdmissionPolicy (--admission-policy);
  - with --dns, the CoreDNS change that makes <svc>.<ns>.svc.clusterset.local
    resolve: read access to ServiceImports for CoreDNS, and the Corefile's
    kubernetes plugin extended with the zone (the diff is printed first).

It then requests a token for that ServiceAccount (--token-ttl) and writes a
kubeconfig holding only that token into the Secret <NAME>-kubeconfig (key
"value") in the management cluster, adds that Secret to the resourceNames
of the mcs-gitops Role there, and prints the entry to add to clusterset.yaml.
A running controller picks the Secret up without a restart.

With --cluster-profile it also registers the member in the management
cluster's cluster inventory (SIG Multicluster's ClusterProfile API, see
docs/inventory.md), so every inventory consumer sees it: a ClusterProfile
<NAME> in --cluster-profile-namespace, cluster manager mcs-gitops, whose
status offers the access provider "secretreader" (the member's address and
CA, clusterName <NAME>), and the Secret <NAME> (key "token") that provider
reads, in --namespace. The ClusterProfile CRD is installed when the
management cluster has none. A ClusterSet with spec.inventory then takes
the member from the inventory, with no entry in spec.members.

Join is idempotent: run again, it changes nothing and keeps the token while
it authenticates and has more than half its lifetime left; --rotate issues a
new one. A Secret of that name that join did not write (for example Cluster
API's administrator kubeconfig) is never overwritten. Without a management
cluster, --kubeconfig-out writes the kubeconfig to a file (mode 0600).

--dry-run prints what would change and changes nothing.`,
		Example: `  # see what it would do
  mcs-gitops member join cluster-3 --context cluster-3-admin --management-kubeconfig mgmt.kubeconfig --dry-run

  # join, with CoreDNS serving clusterset.local
  mcs-gitops member join cluster-3 --context cluster-3-admin --management-kubeconfig mgmt.kubeconfig --dns

  # the management cluster reaches the member by another address
  mcs-gitops member join cluster-3 --context cluster-3-admin --management-kubeconfig mgmt.kubeconfig \
    --server https://cluster-3.internal:6443

  # register it in the cluster inventory too (spec.inventory)
  mcs-gitops member join cluster-3 --context cluster-3-admin --management-kubeconfig mgmt.kubeconfig \
    --cluster-profile --cluster-profile-namespace fleet

  # no management cluster: a kubeconfig file for a local mcs-gitops run
  mcs-gitops member join cluster-3 --context cluster-3-admin --kubeconfig-out cluster-3.kubeconfig`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if profile && f.management == "" {
				return &exitError{2, fmt.Errorf("--cluster-profile needs --management-kubeconfig: the profile is written there")}
			}
			if f.management == "" && kubeconfigOut == "" {
				return &exitError{2, fmt.Errorf("where should the member's kubeconfig go? pass --management-kubeconfig (a Secret there) or --kubeconfig-out (a file)")}
			}
			o, err := f.options(name)
			if err != nil {
				return err
			}
			if config != "" {
				if err := fromConfig(config, name, &gateway, &createNS, cmd); err != nil {
					return err
				}
			}
			o.Server, o.Gateway, o.CreateNamespaces, o.AdmissionPolicy = server, gateway, createNS, policy
			o.TokenTTL, o.Rotate, o.Zone, o.Out = ttl, rotate, zone, cmd.OutOrStdout()
			o.CRDDeleteTimeout = crdWait
			o.ClusterProfile, o.ProfileNamespace, o.ClusterID = profile, profileNS, clusterID
			if dns {
				ns, cm, ok := strings.Cut(corednsCM, "/")
				if !ok || ns == "" || cm == "" {
					return &exitError{2, fmt.Errorf("--coredns-configmap must be <namespace>/<name>, got %q", corednsCM)}
				}
				o.DNS = &join.CoreDNS{Namespace: ns, ConfigMap: cm}
			}
			res, err := join.Join(cmd.Context(), o)
			if err != nil {
				return &exitError{1, err}
			}
			out := cmd.OutOrStdout()
			if f.dryRun {
				fmt.Fprintln(out, "dry run: nothing was changed")
				return nil
			}
			secretNS := f.namespace
			if kubeconfigOut != "" {
				if err := os.WriteFile(kubeconfigOut, res.Kubeconfig, 0o600); err != nil {
					return &exitError{1, fmt.Errorf("--kubeconfig-out: %w", err)}
				}
				fmt.Fprintf(out, "wrote %s (mode 0600; it holds a bearer token)\n", kubeconfigOut)
				if f.management == "" {
					secretNS = ""
				}
			}
			if profile {
				fmt.Fprintf(out, "\nRegistered as ClusterProfile %s/%s. With spec.inventory (namespace %s) in clusterset.yaml the loop takes it as a member;\nits provider file needs the %q provider (docs/inventory.md).\n", o.ProfileNamespace, name, o.ProfileNamespace, join.ProfileProvider)
				fmt.Fprintf(out, "\nThen check it: mcs-gitops doctor --config clusterset.yaml --member %s\n", name)
				return nil
			}
			fmt.Fprintf(out, "\nAdd to spec.members of clusterset.yaml (if it is not there yet):\n\n%s", join.Entry(name, secretNS, kubeconfigOut))
			if gateway {
				fmt.Fprintln(out, "    mode: gateway\n    gateway: {host: <east-west gateway address>, namespace: <ns>, name: <gateway>}")
			}
			fmt.Fprintf(out, "\nThen check it: mcs-gitops doctor --config clusterset.yaml --member %s\n", name)
			return nil
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&config, "config", "", "the ClusterSet config: when it lists NAME, its mode (gateway) and spec.render.createMissingNamespaces decide --gateway and --create-namespaces")
	fl.StringVar(&server, "server", "", "the member API URL the management cluster uses (default: the administrator kubeconfig's)")
	fl.BoolVar(&gateway, "gateway", false, "install the Gateway API CRDs (gateway mode)")
	fl.BoolVar(&createNS, "create-namespaces", false, "grant create on Namespaces (spec.render.createMissingNamespaces)")
	fl.StringVar(&policy, "admission-policy", join.PolicyAuto, "install the member admission policy: auto (when the member serves ValidatingAdmissionPolicy), always, never")
	fl.BoolVar(&dns, "dns", false, "make the member's CoreDNS serve --zone from ServiceImports (edits the Corefile ConfigMap, printing the diff)")
	fl.StringVar(&corednsCM, "coredns-configmap", "kube-system/coredns", "the ConfigMap holding the member's Corefile, for --dns")
	fl.StringVar(&zone, "zone", "clusterset.local", "the ClusterSet DNS zone, for --dns")
	fl.DurationVar(&ttl, "token-ttl", join.DefaultTokenTTL, "lifetime of the member identity's token (the member's --service-account-max-token-expiration may shorten it)")
	fl.BoolVar(&rotate, "rotate", false, "issue a new token even when the Secret's is still good")
	fl.DurationVar(&crdWait, "crd-delete-timeout", join.DefaultCRDDeleteTimeout, "how long to wait for a CRD that is being deleted to go before installing it again (its objects' finalizers can hold it)")
	fl.BoolVar(&profile, "cluster-profile", false, "also register the member as a ClusterProfile in the management cluster's cluster inventory (docs/inventory.md)")
	fl.StringVar(&profileNS, "cluster-profile-namespace", "", "namespace of the inventory's ClusterProfiles, for --cluster-profile (default: --namespace)")
	fl.StringVar(&clusterID, "cluster-id", "", "the member's KEP-2149 cluster ID, recorded as the profile's cluster.clusterset.k8s.io property (--cluster-profile)")
	fl.StringVar(&kubeconfigOut, "kubeconfig-out", "", "also (or, without --management-kubeconfig, only) write the member's kubeconfig to this file")
	return cmd
}

// fromConfig sets --gateway and --create-namespaces from the ClusterSet
// config when the flags were not given.
func fromConfig(path, name string, gateway, createNS *bool, cmd *cobra.Command) error {
	cfg, err := v1alpha1.LoadFile(path)
	if err != nil {
		return &exitError{2, err}
	}
	if !cmd.Flags().Changed("create-namespaces") {
		*createNS = cfg.Spec.Render.CreateMissingNamespaces
	}
	for _, m := range cfg.Spec.Members {
		if m.Name == name && !cmd.Flags().Changed("gateway") {
			*gateway = m.Mode == v1alpha1.ModeGateway
		}
	}
	return nil
}

func newLeaveCommand() *cobra.Command {
	var f memberFlags
	cmd := &cobra.Command{
		Use:   "leave NAME",
		Short: "Remove what join installed in member NAME and its Secret",
		Long: `Leave undoes join. In the member it deletes the role bindings, the
ServiceAccount kube-system/mcs-gitops (which revokes every token issued for
it), the roles and the admission policy; in the management cluster, the
<NAME>-kubeconfig Secret join wrote (never one it did not write) and its name
in the mcs-gitops Role.

It never deletes a CRD (that would delete every user's ServiceExport), a
user's object, what the loop rendered into the member, or the CoreDNS
configuration. Remove the member from clusterset.yaml first, so the loop
stops serving it; then, to clear the imports it had received:

  kubectl delete serviceimports,services,endpointslices -A -l app.kubernetes.io/managed-by=mcs-gitops`,
		Example: `  mcs-gitops member leave cluster-3 --context cluster-3-admin --management-kubeconfig mgmt.kubeconfig --dry-run`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := f.options(args[0])
			if err != nil {
				return err
			}
			o.Out = cmd.OutOrStdout()
			if err := join.Leave(cmd.Context(), o); err != nil {
				return &exitError{1, err}
			}
			if f.dryRun {
				fmt.Fprintln(cmd.OutOrStdout(), "dry run: nothing was changed")
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}
