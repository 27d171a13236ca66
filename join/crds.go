package join

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/schemas/crds"
)

// wantedCRDs are the CRDs a member needs: MCS and GlobalTrafficPolicy
// always, the Gateway API ones only in gateway mode (where a Gateway
// implementation usually brought them already).
func wantedCRDs(gateway bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := crds.MCS()
	if err != nil {
		return nil, err
	}
	gtp, err := crds.GlobalTrafficPolicy()
	if err != nil {
		return nil, err
	}
	out = append(out, gtp)
	if gateway {
		gw, err := crds.GatewayAPI()
		if err != nil {
			return nil, err
		}
		out = append(out, gw...)
	}
	return out, nil
}

// installCRD creates a missing CRD and keeps one join installed before at
// this build's version. A CRD someone else installed is left as it is
// when it serves every version this build does, and is an error naming
// the missing versions otherwise: replacing another owner's CRD could
// drop a version its users' objects are stored in.
func (r *reporter) installCRD(ctx context.Context, c client.Client, want *apiextensionsv1.CustomResourceDefinition) error {
	have := &apiextensionsv1.CustomResourceDefinition{}
	err := c.Get(ctx, client.ObjectKey{Name: want.Name}, have)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: read CustomResourceDefinition %s: %w", r.where, want.Name, err)
	}
	if err == nil && !slices.ContainsFunc(have.GetManagedFields(), func(f metav1.ManagedFieldsEntry) bool { return f.Manager == FieldManager }) {
		if missing := missingVersions(have, want); len(missing) > 0 {
			return fmt.Errorf("%s: CustomResourceDefinition %s, installed by someone else, does not serve %s, which mcs-gitops needs: upgrade it to sigs.k8s.io/mcs-api or Gateway API at least at the version of `mcs-gitops version`, then join again",
				r.where, want.Name, strings.Join(missing, ", "))
		}
		r.say("CustomResourceDefinition "+want.Name, "kept")
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s: %w", want.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return r.apply(ctx, c, u)
}

// missingVersions are the versions want serves and have does not.
func missingVersions(have, want *apiextensionsv1.CustomResourceDefinition) []string {
	var missing []string
	for _, w := range want.Spec.Versions {
		if !w.Served {
			continue
		}
		if !slices.ContainsFunc(have.Spec.Versions, func(h apiextensionsv1.CustomResourceDefinitionVersion) bool {
			return h.Name == w.Name && h.Served
		}) {
			missing = append(missing, w.Name)
		}
	}
	return missing
}
