// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// APIVersion and Kind identify a clusterset.yaml document.
const (
	Group      = "mcs-gitops.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "ClusterSet"
)

// ClusterSet lists the member clusters of one KEP-1645 ClusterSet and how
// mcs-gitops renders their multi-cluster services.
type ClusterSet struct {
	// APIVersion must be mcs-gitops.io/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind must be ClusterSet.
	Kind string `json:"kind"`
	// Metadata names the ClusterSet.
	Metadata Metadata `json:"metadata"`
	// Spec lists the members and the render options.
	Spec ClusterSetSpec `json:"spec"`
}

// Metadata names the ClusterSet.
type Metadata struct {
	// Name of the ClusterSet, a DNS label.
	Name string `json:"name" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
}

// ClusterSetSpec is the body of a ClusterSet.
type ClusterSetSpec struct {
	// Members are the clusters of the ClusterSet. Each exports and imports
	// services. At least one is required unless inventory is set.
	Members []Member `json:"members,omitempty"`
	// Inventory adds the clusters of a cluster inventory (ClusterProfiles)
	// to the members.
	Inventory *InventorySource `json:"inventory,omitempty"`
	// Render tunes what the renderer emits.
	Render RenderOptions `json:"render,omitempty"`
	// Git is the repository the live loop commits the rendered tree to.
	Git GitOptions `json:"git,omitempty"`
	// Sync tunes the live loop: timeouts, staleness, commit pacing.
	Sync SyncOptions `json:"sync,omitempty"`
	// Review turns review mode on: structural changes become pull or merge
	// requests on the forge, merged by a person, instead of direct commits.
	Review ReviewOptions `json:"review,omitempty"`
	// Reach says which namespaces may be exported and which members may
	// import them; unset, every namespace reaches every member.
	Reach ReachPolicy `json:"reach,omitempty"`
	// Rollout stages structural changes of a service across the members
	// in waves; unset, every change reaches every member at once.
	Rollout RolloutPolicy `json:"rollout,omitempty"`
}

// DataPathMode says how traffic reaches a member's endpoints from another member.
type DataPathMode string

const (
	// ModeFlat means pod IPs are routable between clusters: imported
	// EndpointSlices mirror the source member's endpoints.
	ModeFlat DataPathMode = "flat"
	// ModeGateway means the member's pods are reachable only through its
	// east-west gateway: its exports are published as Gateway API routes
	// on that gateway, and other members reach them at the gateway address.
	ModeGateway DataPathMode = "gateway"
)

// Member is one cluster of the ClusterSet.
type Member struct {
	// Name of the member, a DNS label, unique in the ClusterSet. Used for
	// the directories clusters/<name>/ and inputs/<name>.yaml.
	Name string `json:"name" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// ClusterID overrides the KEP-2149 cluster ID (the value of the
	// cluster.clusterset.k8s.io ClusterProperty) used in the
	// multicluster.kubernetes.io/source-cluster label and in statuses.
	// Defaults to the member's ClusterProperty, else to its name.
	ClusterID string `json:"clusterID,omitempty" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Region of the member, part of its cluster key region/zone/group/name.
	Region string `json:"region,omitempty" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Zone of the member, part of its cluster key region/zone/group/name.
	Zone string `json:"zone,omitempty" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Group of the member, part of its cluster key. Defaults to "default".
	Group string `json:"group,omitempty" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63;default=default"`
	// Mode is the data-path mode of the member: "flat" (pod IPs routable
	// from the other flat members) or "gateway" (reachable only through
	// its gateway, which must then be set).
	Mode DataPathMode `json:"mode,omitempty" schema:"enum=flat|gateway;default=flat"`
	// Kubeconfig says where the credentials to reach the member live. They
	// are never written into this file.
	Kubeconfig KubeconfigRef `json:"kubeconfig,omitempty"`
	// Gateway is the member's east-west gateway. Required in gateway mode;
	// a flat member may have one too, so gateway members can reach it and
	// weighted traffic policies can be rendered for it.
	Gateway *Gateway `json:"gateway,omitempty"`
	// Mesh says the member runs a service mesh that reads Gateway API
	// routes attached to Services (GAMMA). Weighted traffic policies are
	// then rendered as an HTTPRoute on the derived Service.
	Mesh bool `json:"mesh,omitempty"`
	// Labels describe the member (region, environment, ...) for
	// spec.reach's member selectors.
	Labels map[string]string `json:"labels,omitempty"`
}

// KubeconfigRef points at a member's credentials without containing them.
// At most one of path, secretRef, inCluster or clusterProfile may be set.
type KubeconfigRef struct {
	// Path of a kubeconfig file on the machine running mcs-gitops.
	Path string `json:"path,omitempty"`
	// Context in that kubeconfig; defaults to its current-context.
	Context string `json:"context,omitempty"`
	// SecretRef names a Secret in the management cluster holding a kubeconfig
	// (the Cluster API <cluster>-kubeconfig Secret works as is).
	SecretRef *SecretKeyRef `json:"secretRef,omitempty"`
	// InCluster uses the service account mcs-gitops runs as.
	InCluster bool `json:"inCluster,omitempty"`
	// ClusterProfile gets the credentials the way inventory members do:
	// through an access provider of that ClusterProfile and
	// spec.inventory.providerFile.
	ClusterProfile *ClusterProfileRef `json:"clusterProfile,omitempty"`
}

// SecretKeyRef names one key of a Secret.
type SecretKeyRef struct {
	// Namespace of the Secret.
	Namespace string `json:"namespace" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Name of the Secret.
	Name string `json:"name" schema:"maxLength=253"`
	// Key in the Secret's data; defaults to "value" (the Cluster API convention).
	Key string `json:"key,omitempty" schema:"default=value"`
}

// Gateway is a member's east-west gateway: where other members reach it,
// and the Gateway API Gateway the rendered routes attach to.
type Gateway struct {
	// Host is an IP address or DNS name other members reach the gateway at.
	// A DNS name is resolved when the member is read; the addresses are
	// recorded in its snapshot and are what the rendered slices point at.
	Host string `json:"host" schema:"maxLength=253"`
	// Port of the gateway's HTTP listener, which serves every exported HTTP
	// port by hostname. Defaults to 80.
	Port int32 `json:"port,omitempty" schema:"minimum=1;maximum=65535;default=80"`
	// Namespace of the Gateway object the rendered routes attach to.
	Namespace string `json:"namespace" schema:"pattern=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$;maxLength=63"`
	// Name of the Gateway object the rendered routes attach to.
	Name string `json:"name" schema:"maxLength=253"`
	// TCPPorts is the range of gateway ports allocated to exported non-HTTP
	// ports, one listener each. Without it such ports cannot be exported
	// through the gateway.
	TCPPorts *PortRange `json:"tcpPorts,omitempty"`
	// TCPListeners says where the listeners of tcpPorts are declared:
	// "ListenerSet" (one ListenerSet per exported service, attached to the
	// Gateway) or "Gateway" (in the Gateway's own spec.listeners, merged by
	// server-side apply beside the listeners already there, for
	// implementations without ListenerSet). Defaults to ListenerSet.
	TCPListeners TCPListenerMode `json:"tcpListeners,omitempty" schema:"enum=ListenerSet|Gateway;default=ListenerSet"`
}

// TCPListenerMode says which object declares a gateway's TCP listeners.
type TCPListenerMode string

const (
	// TCPListenersListenerSet declares them in ListenerSets that attach to
	// the Gateway, so the user's Gateway object is never written.
	TCPListenersListenerSet TCPListenerMode = "ListenerSet"
	// TCPListenersGateway declares them in the Gateway itself: the
	// implementations that have no ListenerSet (Traefik, NGINX Gateway
	// Fabric, HAProxy) read listeners from nowhere else.
	TCPListenersGateway TCPListenerMode = "Gateway"
)

// PortRange is an inclusive range of port numbers.
type PortRange struct {
	// From is the first port of the range.
	From int32 `json:"from" schema:"minimum=1;maximum=65535"`
	// To is the last port of the range, at least From.
	To int32 `json:"to" schema:"minimum=1;maximum=65535"`
}

// Contains reports whether port p is in the range.
func (r *PortRange) Contains(p int32) bool { return r != nil && p >= r.From && p <= r.To }

// ServiceImportAPIVersion is the API version of the emitted ServiceImports.
type ServiceImportAPIVersion string

const (
	ServiceImportV1Alpha1 ServiceImportAPIVersion = "v1alpha1"
	ServiceImportV1Beta1  ServiceImportAPIVersion = "v1beta1"
)

// RenderOptions tune the renderer.
type RenderOptions struct {
	// ServiceImportAPIVersion is the multicluster.x-k8s.io version of the
	// emitted ServiceImports. Defaults to v1alpha1, the version CoreDNS's
	// multicluster plugin reads.
	ServiceImportAPIVersion ServiceImportAPIVersion `json:"serviceImportAPIVersion,omitempty" schema:"enum=v1alpha1|v1beta1;default=v1alpha1"`
	// CreateMissingNamespaces renders a Namespace into a member that lacks the
	// namespace of an imported service. By default the import is skipped
	// there and reported.
	CreateMissingNamespaces bool `json:"createMissingNamespaces,omitempty"`
}

// Default fills in the documented defaults.
func (c *ClusterSet) Default() {
	for i := range c.Spec.Members {
		m := &c.Spec.Members[i]
		if m.Group == "" {
			m.Group = "default"
		}
		if m.Mode == "" {
			m.Mode = ModeFlat
		}
		if m.Kubeconfig.SecretRef != nil && m.Kubeconfig.SecretRef.Key == "" {
			m.Kubeconfig.SecretRef.Key = "value"
		}
		if m.Gateway != nil && m.Gateway.Port == 0 {
			m.Gateway.Port = 80
		}
		if m.Gateway != nil && m.Gateway.TCPListeners == "" {
			m.Gateway.TCPListeners = TCPListenersListenerSet
		}
	}
	g := &c.Spec.Git
	if g.Branch == "" {
		g.Branch = DefaultBranch
	}
	if g.Author.Name == "" {
		g.Author.Name = DefaultAuthorName
	}
	if g.Author.Email == "" {
		g.Author.Email = DefaultAuthorEmail
	}
	if g.Auth.Username == "" {
		g.Auth.Username = DefaultGitUsername
	}
	creds := []*CredentialSource{g.Auth.Token, g.Auth.SSHKey, g.Auth.KnownHosts, c.Spec.Review.Forge.Token}
	if a := c.Spec.Review.Forge.GitHubApp; a != nil {
		creds = append(creds, a.PrivateKey)
	}
	if g.Signing != nil {
		creds = append(creds, g.Signing.Key, g.Signing.Passphrase)
	}
	if g.Verify != nil {
		for _, k := range g.Verify.Keys {
			creds = append(creds, k.Source)
		}
	}
	for _, cs := range creds {
		if cs != nil && cs.SecretRef != nil && cs.SecretRef.Key == "" {
			cs.SecretRef.Key = "value"
		}
	}
	if inv := c.Spec.Inventory; inv != nil && inv.Group == "" {
		inv.Group = "default"
	}
	if c.Spec.Render.ServiceImportAPIVersion == "" {
		c.Spec.Render.ServiceImportAPIVersion = ServiceImportV1Alpha1
	}
}

// MemberNames lists the members' names in the order of the config.
func (c *ClusterSet) MemberNames() []string {
	names := make([]string, len(c.Spec.Members))
	for i, m := range c.Spec.Members {
		names[i] = m.Name
	}
	return names
}

// Member returns the member named name.
func (c *ClusterSet) Member(name string) (*Member, bool) {
	for i := range c.Spec.Members {
		if c.Spec.Members[i].Name == name {
			return &c.Spec.Members[i], true
		}
	}
	return nil, false
}

// Key is the member's cluster key region/zone/group/name, used by traffic
// policies to name targets.
func (m *Member) Key() string {
	return m.Region + "/" + m.Zone + "/" + m.Group + "/" + m.Name
}
