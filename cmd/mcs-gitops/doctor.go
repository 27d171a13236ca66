// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/internal/member/doctor"
)

func newDoctorCommand() *cobra.Command {
	var (
		f          loopFlags
		members    []string
		skip       []string
		probe      bool
		dnsServers []string
		output     string
		strict     bool
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check every member: reachable, CRDs, permissions, DNS; say how to fix each problem",
		Long: `Doctor checks each member of the ClusterSet with the identity the loop uses
(the kubeconfig clusterset.yaml names), in parallel, and prints each finding
with its fix. It only reads; it is safe on a production fleet.

Checks, in order (a member that cannot be reached skips the rest):

  connect      a client can be built (the kubeconfig file or Secret exists)
  reachable    the apiserver answers, and its version
  identity     who the member takes the credential for; a bearer token's
               expiry (a warning 30 days before)
  crds         the MCS API (v1alpha1, which CoreDNS reads, and the configured
               ServiceImport version), GlobalTrafficPolicy, and in gateway
               mode the Gateway API kinds the renderer writes, are served
  permissions  every verb a cycle uses is allowed (one SelfSubjectAccessReview
               each, from the roles in deploy/member-rbac), and a warning when
               the identity may do more (an administrator kubeconfig)
  coredns      the Corefile in kube-system/coredns serves the ClusterSet zone
               (the kubernetes plugin's multicluster option)
  dns-probe    with --dns-probe: the first imported name resolves, through the
               member's kube-dns Service or --dns-server, to the import's IPs

Exit codes: 0 no check failed (warnings allowed; --strict fails on them too);
1 some check failed; 2 invalid config or flags.`,
		Example: `  mcs-gitops doctor --config clusterset.yaml --management-kubeconfig mgmt.kubeconfig

  # one member, for a script
  mcs-gitops doctor --config clusterset.yaml --member cluster-3 -o json

  # resolve an imported name through a DNS server reachable from here
  mcs-gitops doctor --config clusterset.yaml --dns-probe --dns-server cluster-3=10.3.0.10:53`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return &exitError{2, fmt.Errorf("-o must be text or json, got %q", output)}
			}
			for _, s := range skip {
				if !slices.Contains(doctor.Skippable, s) {
					return &exitError{2, fmt.Errorf("--skip %q: the checks that can be skipped are %s", s, strings.Join(doctor.Skippable, ", "))}
				}
			}
			servers := map[string]string{}
			for _, s := range dnsServers {
				name, addr, ok := strings.Cut(s, "=")
				if !ok || name == "" || addr == "" {
					return &exitError{2, fmt.Errorf("--dns-server must be <member>=<host:port>, got %q", s)}
				}
				servers[name] = addr
			}
			e, err := f.connectMembers(cmd.Context(), cmd)
			if err != nil {
				return err
			}
			// The inventory's state goes to stderr, so -o json stays one
			// document; a list that fails leaves the hand-written members
			// to check, and exits 1.
			invErr := e.joinInventory(cmd.Context(), nil)
			if st := e.inventory; invErr == nil && st != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "inventory: %d member(s) from ClusterProfiles in namespace %s\n", len(st.record.Members), st.record.Namespace)
				for _, r := range st.record.Refused {
					fmt.Fprintf(cmd.ErrOrStderr(), "inventory: ClusterProfile %s is not a member: %s\n", r.Profile, r.Reason)
				}
			} else if invErr != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "inventory: %v\n", invErr)
			}
			var unknown []string
			for _, m := range append(members, slices.Sorted(maps.Keys(servers))...) {
				if e.members.Member(m) == nil {
					unknown = append(unknown, m)
				}
			}
			if len(unknown) > 0 {
				return &exitError{2, fmt.Errorf("not members of %s: %s", f.config, strings.Join(unknown, ", "))}
			}
			r := doctor.Run(cmd.Context(), doctor.Options{
				Config: e.cfg, Members: e.members, Only: members, Skip: skip, DNSProbe: probe, DNSServers: servers,
			})
			if output == "json" {
				err = r.WriteJSON(cmd.OutOrStdout())
			} else {
				err = r.WriteText(cmd.OutOrStdout())
			}
			if err != nil {
				return &exitError{2, err}
			}
			if r.Errors > 0 || strict && r.Warnings > 0 || invErr != nil {
				return &exitError{1, errors.New("")}
			}
			return nil
		},
	}
	f.register(cmd, false)
	fl := cmd.Flags()
	fl.StringSliceVar(&members, "member", nil, "check only these members (repeatable)")
	fl.StringSliceVar(&skip, "skip", nil, "checks not to run: "+strings.Join(doctor.Skippable, ", "))
	fl.BoolVar(&probe, "dns-probe", false, "resolve one imported name per member through its DNS (its kube-dns Service IP must be reachable from here, or use --dns-server)")
	fl.StringSliceVar(&dnsServers, "dns-server", nil, "<member>=<host:port>: where --dns-probe queries that member's DNS")
	fl.StringVarP(&output, "output", "o", "text", "text or json")
	fl.BoolVar(&strict, "strict", false, "exit 1 on warnings too")
	return cmd
}
