// SPDX-License-Identifier: Apache-2.0

// Package clusters is the ClusterSet registry: it turns clusterset.yaml into
// member clusters and owns everything read from them.
//
//   - connect.go, kubeconfig.go, secret.go: one client per member from a
//     kubeconfig file and context (relative to ConnectOptions.BaseDir), a
//     kubeconfig Secret in the management cluster (the Cluster API
//     <cluster>-kubeconfig Secret, key "value"; no exec/auth-provider plugins
//     or local file references allowed from a Secret), or in-cluster config.
//     Connect never contacts a member; a member whose client cannot be built
//     gets Member.Err and the others are unaffected. ReadSecretKey also
//     serves Git credentials.
//   - collect.go, read.go, reason.go: Collect reads all members in parallel,
//     each bounded by a timeout, with lists filtered to what is exported
//     (EndpointSlices by kubernetes.io/service-name of exported Services,
//     never slices mcs-gitops applied). A snapshot equals what
//     snapshot.Parse gives for `kubectl get -o yaml` of the same objects,
//     GlobalTrafficPolicies included (policy.go; no CRD means no policies,
//     not a failure). A failure carries a Reason: Unreachable, Timeout,
//     Unauthorized, Forbidden, CRDMissing (the MCS CRDs only) or Config.
//   - gateway.go: a gateway host that is a DNS name is resolved (with an
//     injectable LookupHost) alongside each read into
//     Snapshot.GatewayAddresses; a failed lookup is Result.GatewayErr and
//     never fails the read.
//   - Reads turns a round of results into the narrow input of
//     snapshot.Resolve, the pure policy of what stands in for a member
//     that could not be read (it lives beside the snapshot type, not
//     here: this package only talks to members).
//   - watch.go: metadata-only informers on every member turn changes into a
//     notify(member) signal for the loop; down members and missing CRDs are
//     retried with backoff and never block the others, and an optional CRD
//     (ClusterProperty, GlobalTrafficPolicy) installed later is picked up.
//   - served.go: ServedResources, what a member serves in a group version
//     by discovery, bounded by a context; only a 404 means "not served"
//     (doctor's crds check and join's admission-policy choice rest on it).
//
// It must not render, write Git or apply anything to a member, and must
// never put a credential (kubeconfig, token, key) in an error or log line:
// kubeconfig parser messages, which can quote values, are withheld.
//
// The snapshot type and its file format live in the snapshot subpackage, so
// the pure renderer can use them without depending on cluster clients.
package clusters
