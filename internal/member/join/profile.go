// SPDX-License-Identifier: Apache-2.0

package join

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/inventory"
	"github.com/mcs-gitops/mcs-gitops/schemas/crds"
)

const (
	// ClusterManager is the cluster manager name of the ClusterProfiles
	// join registers, and their x-k8s.io/cluster-manager label.
	ClusterManager = "mcs-gitops"
	// ProfileProvider is the access provider those profiles offer: the
	// protocol of cluster-inventory-api's reference plugin secretreader
	// (the token of Secret <consumer namespace>/<clusterName>), which
	// `mcs-gitops credential secret-token` speaks too.
	ProfileProvider = "secretreader"
)

// TokenSecretName is the Secret holding the member's bearer token for
// the secretreader protocol: named after the member, the clusterName of
// its profile.
func TokenSecretName(member string) string { return member }

// registerProfile registers the member in the cluster inventory: the
// ClusterProfile CRD where none is, the token Secret the access provider
// reads (in the namespace mcs-gitops runs in, granted to it like the
// kubeconfig Secret) and the profile, its status naming the provider and
// the member's address and CA. kubeconfig is the one join wrote.
func (r *reporter) registerProfile(ctx context.Context, mgmt client.Client, o Options, kubeconfig []byte) error {
	kc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return fmt.Errorf("member %q: the kubeconfig join wrote does not load: %w", o.Member, err)
	}
	token, _, ok := kubeconfigToken(kubeconfig)
	cluster := kc.Clusters[o.Member]
	if !ok || cluster == nil {
		return fmt.Errorf("member %q: the kubeconfig join wrote has no token or cluster", o.Member)
	}
	if err := r.ensureProfileCRD(ctx, mgmt, o); err != nil {
		return err
	}
	if err := r.writeOwnedSecret(ctx, mgmt, o.Namespace, TokenSecretName(o.Member), o.Member,
		map[string][]byte{"token": []byte(token)}, "delete or rename it"); err != nil {
		return err
	}
	if err := r.grantSecretNamed(ctx, mgmt, o.Namespace, TokenSecretName(o.Member), true); err != nil {
		return err
	}
	ns := o.ProfileNamespace
	profile := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": ns, "name": o.Member,
			"labels": map[string]any{inventory.LabelClusterManager: ClusterManager, LabelManagedBy: FieldManager}},
		"spec": map[string]any{"displayName": o.Member, "clusterManager": map[string]any{"name": ClusterManager}},
	}}
	profile.SetGroupVersionKind(inventory.GroupVersionKind)
	if err := r.apply(ctx, mgmt, profile); err != nil {
		return err
	}
	ext, err := json.Marshal(map[string]string{"clusterName": o.Member})
	if err != nil {
		return err
	}
	c := map[string]any{"server": cluster.Server, "extensions": []any{
		map[string]any{"name": inventory.ExtensionExec, "extension": json.RawMessage(ext)},
	}}
	if len(cluster.CertificateAuthorityData) > 0 {
		c["certificate-authority-data"] = cluster.CertificateAuthorityData
	}
	if cluster.TLSServerName != "" {
		c["tls-server-name"] = cluster.TLSServerName
	}
	status := map[string]any{"accessProviders": []any{map[string]any{"name": ProfileProvider, "cluster": c}}}
	if o.ClusterID != "" {
		status["properties"] = []any{map[string]any{"name": inventory.PropertyClusterID, "value": o.ClusterID}}
	}
	b, err := json.Marshal(status)
	if err != nil {
		return err
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	withStatus := profile.DeepCopy()
	withStatus.Object["status"] = st
	opts := []client.SubResourceApplyOption{client.FieldOwner(FieldManager), client.ForceOwnership}
	if r.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := mgmt.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(withStatus), opts...); err != nil {
		return fmt.Errorf("%s: apply the status of ClusterProfile %s/%s: %w", r.where, ns, o.Member, err)
	}
	r.say(fmt.Sprintf("ClusterProfile %s/%s status (access provider %s)", ns, o.Member, ProfileProvider), "applied")
	return nil
}

// ensureProfileCRD installs the project's ClusterProfile CRD when the
// management cluster has none; one a cluster manager installed is kept.
func (r *reporter) ensureProfileCRD(ctx context.Context, mgmt client.Client, o Options) error {
	want, err := crds.ClusterProfile()
	if err != nil {
		return err
	}
	var have apiextensionsv1.CustomResourceDefinition
	err = mgmt.Get(ctx, client.ObjectKey{Name: want.Name}, &have)
	if err == nil {
		r.say("CustomResourceDefinition "+want.Name, "kept (installed already)")
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: read CustomResourceDefinition %s: %w", r.where, want.Name, err)
	}
	if err := r.installCRD(ctx, mgmt, want, o.CRDDeleteTimeout); err != nil || r.dryRun {
		return err
	}
	// The profile is applied right after: until the apiserver serves the
	// new kind, and the client has discovered it, that apply would fail
	// with "no matches for kind".
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, crdServedTimeout, true, func(context.Context) (bool, error) {
		if err := mgmt.Get(ctx, client.ObjectKey{Name: want.Name}, &have); err != nil {
			return false, err
		}
		if !established(&have) {
			return false, nil
		}
		_, err := mgmt.RESTMapper().RESTMapping(inventory.GroupVersionKind.GroupKind(), inventory.Version)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s: CustomResourceDefinition %s was not served within %s: %w", r.where, want.Name, crdServedTimeout, err)
	}
	return nil
}

// crdServedTimeout bounds the wait for a new CRD to be served; the
// apiserver takes a moment, longer on a loaded machine.
const crdServedTimeout = time.Minute

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
